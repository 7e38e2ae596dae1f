"""The layering the design promises, checked on the source: one home for each decision."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gth_jupyter"
#: Every package of gth_jupyter (each file of one is checked by the tests below).
PACKAGES = [
    "agent",
    "agui",
    "config",
    "contract",
    "kernel",
    "middleware",
    "models",
    "notebook",
    "runs",
    "server",
    "tools",
]


def imports_of(folder: str) -> dict[str, set[str]]:
    """Absolute module names each file of ``folder`` imports (relative imports resolved)."""
    found: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / folder).glob("*.py")):
        parts = ["gth_jupyter", folder]
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = parts[: len(parts) - node.level + 1] if node.level else []
                module = ".".join([*base, node.module] if node.module else base)
                names.add(module)
                names |= {f"{module}.{alias.name}" for alias in node.names}
        found[path.name] = names
    return found


def test_the_notebook_never_imports_the_server() -> None:
    for name, modules in imports_of("notebook").items():
        assert not any(m.startswith("gth_jupyter.server") for m in modules), name


def test_the_protocol_layer_reads_only_the_contract_and_the_runtime_of_the_agent() -> None:
    for name, modules in imports_of("agui").items():
        used = {".".join(m.split(".")[:3]) for m in modules if m.startswith("gth_jupyter.agent")}
        assert used <= {"gth_jupyter.agent.runtime"}, (name, used)
        runtime_names = {m for m in modules if m.startswith("gth_jupyter.agent.runtime.")}
        assert runtime_names <= {
            "gth_jupyter.agent.runtime.Runtime",
            "gth_jupyter.agent.runtime.ThreadClaim",
        }, name
    for name, modules in imports_of("agui").items():
        assert not any(m.startswith(("langgraph", "gth_jupyter.middleware")) for m in modules), name


#: Each package's floor: a package imports only packages on lower floors (``_lazy`` is a helper
#: every floor may use). The run contract is the ground everything stands on.
FLOORS = {
    "contract": 0,
    "config": 1,
    "kernel": 1,
    "models": 1,
    "store": 1,
    "tools": 2,
    "middleware": 3,
    "agent": 4,
    "agui": 5,
    "runs": 6,
    "server": 7,
    "notebook": 7,
}


@pytest.mark.parametrize("folder", sorted(FLOORS))
def test_a_package_imports_only_the_floors_below_it(folder: str) -> None:
    if not (PACKAGE / folder).is_dir():
        pytest.skip(f"no {folder}/ yet")
    upward: set[tuple[str, str]] = set()
    for name, modules in imports_of(folder).items():
        for module in modules:
            parts = module.split(".")
            if parts[0] != "gth_jupyter" or len(parts) < 2 or parts[1] in {folder, "_lazy"}:
                continue
            if parts[1] not in FLOORS or FLOORS[parts[1]] >= FLOORS[folder]:
                upward.add((name, ".".join(parts[:3])))
    assert not upward, sorted(upward)


def _file_graph() -> dict[str, set[str]]:
    """Which module imports which, over every module of the package but the faces (any import,
    also one made inside a function or for type checking only)."""
    modules = {
        ".".join(("gth_jupyter", *p.relative_to(PACKAGE).with_suffix("").parts))
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py"
    }
    graph: dict[str, set[str]] = {}
    for folder in sorted({m.split(".")[1] for m in modules if m.count(".") == 2}):
        for name, imported in imports_of(folder).items():
            if name == "__init__.py":
                continue
            here = f"gth_jupyter.{folder}.{name[:-3]}"
            graph[here] = {m for m in imported if m in modules and m != here}
    return graph


def test_no_two_modules_import_each_other_in_a_circle() -> None:
    graph = _file_graph()
    seen: dict[str, int] = {}  # 1: on the current path, 2: done
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if seen.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for start in sorted(graph):
        if start not in seen:
            visit(start, [start])
    assert not circles, circles


def test_the_contract_imports_nothing_of_the_package_but_itself() -> None:
    for name, modules in imports_of("contract").items():
        outside = {m for m in modules if m.startswith("gth_jupyter.")}
        assert all(m.startswith("gth_jupyter.contract") for m in outside), (name, outside)


def test_the_approvals_read_a_tools_kind_from_the_public_module_of_tools() -> None:
    for folder in ("agent", "middleware"):
        for name, modules in imports_of(folder).items():
            assert not any(m.startswith("gth_jupyter.tools._") for m in modules), (folder, name)


@pytest.mark.parametrize("folder", PACKAGES)
def test_nothing_reads_langgraphs_private_state(folder: str) -> None:
    for path in (PACKAGE / folder).glob("*.py"):
        assert "_internal" not in path.read_text(), path.name


def test_the_contract_is_free_of_langgraph() -> None:
    code = (
        "import sys, gth_jupyter.contract, pkgutil, importlib; "
        "[importlib.import_module(f'gth_jupyter.contract.{m.name}') "
        "for m in pkgutil.iter_modules(gth_jupyter.contract.__path__)]; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'langgraph'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("folder", PACKAGES)
def test_every_package_has_a_documented_face(folder: str) -> None:
    tree = ast.parse((PACKAGE / folder / "__init__.py").read_text())
    assert ast.get_docstring(tree), folder
    assert any(
        isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "__all__" for t in node.targets)
        for node in tree.body
    ), folder
