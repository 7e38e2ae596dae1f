"""The layering the design promises, checked on the source: one home for each decision."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gth_jupyter"
#: Every package of gth_jupyter (each file of one, at any depth, is checked by the tests below).
PACKAGES = [
    "agent",
    "agui",
    "config",
    "contract",
    "copy",
    "kernel",
    "middleware",
    "models",
    "notebook",
    "runs",
    "server",
    "store",
    "tools",
]


def module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__.py``: the package)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.Module, *, runtime_only: bool) -> list[ast.Import | ast.ImportFrom]:
    """Every import of ``tree``; with ``runtime_only``, only those the module runs as it loads
    (at module level, outside ``if TYPE_CHECKING:``)."""
    if not runtime_only:
        return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.If, ast.Try, ast.With)) and not _is_type_checking(node):
            for field in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(node, field, []):
                    pending.extend(child.body if isinstance(child, ast.ExceptHandler) else [child])
    return found


def imports_in(path: Path, *, runtime_only: bool = False) -> set[str]:
    """Absolute module names the module at ``path`` imports (relative imports resolved; for
    ``from m import n`` both ``m`` and ``m.n``). Any import counts, also one made inside a
    function or for type checking only, unless ``runtime_only``."""
    package = list(path.relative_to(PACKAGE.parent).parent.parts)
    names: set[str] = set()
    tree = ast.parse(path.read_text())
    for node in _import_nodes(tree, runtime_only=runtime_only):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        else:
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


def imports_of(folder: str) -> dict[str, set[str]]:
    """What each module of ``folder`` imports, at any depth, keyed by its path in the folder."""
    root = PACKAGE / folder
    return {str(p.relative_to(root)): imports_in(p) for p in sorted(root.rglob("*.py"))}


def test_every_package_is_listed() -> None:
    found = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert found == set(PACKAGES)


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
    "copy": 1,
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


#: The floors inside a package, for its sub-packages. The notebook side: the in-kernel host at
#: the bottom; headless runs stand on the host; the entry (the magics and the widget) on top,
#: starting either (the static copy both hosts render is a package below them, ``copy/``). A
#: sub-package on a floor imports only sub-packages on lower floors (its parent's own modules
#: are not floors).
SUB_FLOORS = {
    "notebook": {"host": 0, "headless": 1, "entry": 2},
    "tools": {"fs": 0, "mcp": 0, "grep": 1},
}


@pytest.mark.parametrize("folder", sorted(SUB_FLOORS))
def test_a_sub_package_imports_only_the_floors_below_it(folder: str) -> None:
    floors = SUB_FLOORS[folder]
    present = {p.parent.name for p in (PACKAGE / folder).glob("*/__init__.py")}
    assert present == set(floors), f"every sub-package of {folder}/ has a floor"
    upward: set[tuple[str, str]] = set()
    for name, modules in imports_of(folder).items():
        here = name.split("/")[0]
        if here not in floors:
            continue  # a module of the package itself
        for module in modules:
            parts = module.split(".")
            if parts[:2] != ["gth_jupyter", folder] or len(parts) < 3 or parts[2] == here:
                continue
            if parts[2] in floors and floors[parts[2]] >= floors[here]:
                upward.add((name, ".".join(parts[:3])))
    assert not upward, sorted(upward)


#: What the static copy may import: it is pure (no IPython, no kernel state, no agent).
COPY_MAY_IMPORT = ("gth_jupyter.contract", "gth_jupyter.copy")
NOT_IN_THE_COPY = ("IPython", "ipykernel", "ipywidgets", "anywidget", "langchain", "langgraph")


def test_the_static_copy_imports_nothing_of_the_kernel_side_nor_the_agent() -> None:
    for name, modules in imports_of("copy").items():
        ours = {m for m in modules if m.split(".")[0] == "gth_jupyter"}
        assert all(m.startswith(COPY_MAY_IMPORT) for m in ours), (name, sorted(ours))
        assert not {m for m in modules if m.split(".")[0] in NOT_IN_THE_COPY}, name


def test_the_static_copy_loads_no_ipython_kernel_or_agent() -> None:
    code = (
        "import sys, pkgutil, importlib, gth_jupyter.copy as c; "
        "[importlib.import_module(f'{c.__name__}.{m.name}') "
        "for m in pkgutil.iter_modules(c.__path__)]; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(NOT_IN_THE_COPY)!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _modules() -> dict[str, Path]:
    """Every module of the package, faces included, by dotted name."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _file_graph() -> dict[str, set[str]]:
    """Which module imports which, over every module of the package at any depth. A module's
    imports are any it makes (also inside a function or for type checking only); a face's
    (``__init__.py``) those it runs as it loads, since a lazy face names the rest for type
    checkers. Importing a module runs the faces of its packages first: those of the packages
    the importer is not in count as imported too."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for here, path in modules.items():
        imported = imports_in(path, runtime_only=path.name == "__init__.py")
        own = set(_ancestors(here)) | ({here} if path.name == "__init__.py" else set())
        edges: set[str] = set()
        for module in imported:
            if module not in modules:
                continue
            edges |= {m for m in [*_ancestors(module), module] if m in modules and m not in own}
        edges.discard(here)
        graph[here] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
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
    return circles


def test_the_file_graph_sees_every_module_at_any_depth() -> None:
    graph = _file_graph()
    assert "gth_jupyter.notebook.host.session" in graph
    assert "gth_jupyter.copy.render" in graph["gth_jupyter.notebook.headless.run"]
    assert "gth_jupyter.tools.fs" in graph["gth_jupyter.tools.kinds"]  # a face imported first
    assert set(graph) == set(_modules())


def test_no_two_modules_import_each_other_in_a_circle() -> None:
    assert not _circles(_file_graph())


def test_no_two_packages_import_each_other_in_a_circle() -> None:
    """Packages at any depth, where neither holds the other (a package and its sub-packages
    share helpers both ways; their modules must still form no circle)."""
    modules = _modules()
    package_of = {
        m: (m if p.name == "__init__.py" else m.rsplit(".", 1)[0]) for m, p in modules.items()
    }

    def related(a: str, b: str) -> bool:
        return a == b or a.startswith(f"{b}.") or b.startswith(f"{a}.")

    graph: dict[str, set[str]] = {}
    for here, imported in _file_graph().items():
        mine = package_of[here]
        graph.setdefault(mine, set()).update(
            package_of[m] for m in imported if not related(mine, package_of[m])
        )
    assert not _circles(graph)


def test_a_private_module_is_imported_only_inside_its_package() -> None:
    """``_name`` modules (langgraph's convention) are their package's own: anything outside
    reaches them through the package's face or its public modules."""
    modules = _modules()
    leaks: set[tuple[str, str]] = set()
    for here, path in modules.items():
        for module in imports_in(path):
            parts = module.split(".")
            for i in range(1, len(parts)):
                name = ".".join(parts[: i + 1])
                if parts[i].startswith("_") and not parts[i].startswith("__") and name in modules:
                    owner = ".".join(parts[:i])
                    if here != owner and not here.startswith(f"{owner}."):
                        leaks.add((here, name))
                    break
    assert not leaks, sorted(leaks)


def _face_names(face: str) -> dict[str, str]:
    """The module a face takes each name it names from: imported as it loads, for type checkers
    only, or on first use (its ``lazy_names`` call)."""
    path = _modules()[face]
    found: dict[str, str] = {}
    lazy: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            package = face.split(".")
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                found.setdefault(alias.asname or alias.name, module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_names":
            for keyword in node.keywords:  # lazy_names(__name__, module=("Name", ...), ...)
                assert isinstance(keyword.value, ast.Tuple), ast.dump(keyword)
                for name in keyword.value.elts:
                    assert isinstance(name, ast.Constant), ast.dump(name)
                    lazy[name.value] = f"{face}.{keyword.arg}"
    # An import names the module itself; the lazy table may name a sub-package's face.
    return {**lazy, **found}


def test_a_name_is_imported_from_its_own_module_never_through_a_face() -> None:
    """The import rule, one for every package at every depth: a module imports a name from the
    module that defines it. A face (``__init__.py``) is the way in for users and tests; code of
    the package takes a name through one only where the face defines it, or keeps it in a
    private module (``_x``) that nothing outside the face's package may import."""
    modules = _modules()
    through: set[tuple[str, str]] = set()
    for here, path in modules.items():
        if path.name == "__init__.py":
            continue  # faces name what they offer
        package = here.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package[: len(package) - node.level + 1] if node.level else []
            face = ".".join([*base, node.module] if node.module else base)
            if face not in modules or modules[face].name != "__init__.py":
                continue
            names = _face_names(face)
            for alias in node.names:
                source = names.get(alias.name)
                if f"{face}.{alias.name}" in modules or source is None:
                    continue  # a sub-module, or a name the face defines
                rest = source[len(face) + 1 :].split(".") if source.startswith(f"{face}.") else []
                if not any(part.startswith("_") for part in rest):
                    through.add((here, f"{face}.{alias.name}"))
    assert not through, sorted(through)


def test_the_contract_imports_nothing_of_the_package_but_itself() -> None:
    for name, modules in imports_of("contract").items():
        outside = {m for m in modules if m.startswith("gth_jupyter.")}
        assert all(m.startswith("gth_jupyter.contract") for m in outside), (name, outside)


def test_the_approvals_read_a_tools_kind_from_the_public_module_of_tools() -> None:
    for folder in ("agent", "middleware"):
        for name, modules in imports_of(folder).items():
            private = [
                m
                for m in modules
                if m.startswith("gth_jupyter.tools.")
                and any(p.startswith("_") for p in m.split(".")[2:])
            ]
            assert not private, (folder, name, private)


@pytest.mark.parametrize("folder", PACKAGES)
def test_nothing_reads_langgraphs_private_state(folder: str) -> None:
    for path in (PACKAGE / folder).rglob("*.py"):
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


FACES = sorted(str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("*/__init__.py"))


@pytest.mark.parametrize("folder", FACES)
def test_every_package_has_a_documented_face(folder: str) -> None:
    tree = ast.parse((PACKAGE / folder / "__init__.py").read_text())
    assert ast.get_docstring(tree), folder
    assert any(
        isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "__all__" for t in node.targets)
        for node in tree.body
    ), folder
