"""The layering the design promises, checked on the source: one home for each decision."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "gth_jupyter"


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
    allowed = {
        "gth_jupyter.agent.contract",
        "gth_jupyter.agent.runtime",
        "gth_jupyter.agent",
    }
    for name, modules in imports_of("agui").items():
        used = {
            ".".join(m.split(".")[:3])
            for m in modules
            if m.startswith("gth_jupyter.agent") and not m.startswith("gth_jupyter.agent.contract.")
        }
        assert used <= allowed, (name, used - allowed)
        runtime_names = {m for m in modules if m.startswith("gth_jupyter.agent.runtime.")}
        assert runtime_names <= {
            "gth_jupyter.agent.runtime.Runtime",
            "gth_jupyter.agent.runtime.ThreadClaim",
        }, name
    for name, modules in imports_of("agui").items():
        assert not any(m.startswith(("langgraph", "gth_jupyter.middleware")) for m in modules), name


@pytest.mark.parametrize(
    "folder",
    ["agent", "agui", "config", "kernel", "middleware", "models", "notebook", "server", "tools"],
)
def test_nothing_reads_langgraphs_private_state(folder: str) -> None:
    for path in (PACKAGE / folder).glob("*.py"):
        assert "_internal" not in path.read_text(), path.name


def test_the_contract_is_free_of_langgraph() -> None:
    code = (
        "import sys, gth_jupyter.agent.contract; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'langgraph'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "folder",
    ["agent", "agui", "config", "kernel", "middleware", "models", "notebook", "server", "tools"],
)
def test_every_package_has_a_documented_face(folder: str) -> None:
    tree = ast.parse((PACKAGE / folder / "__init__.py").read_text())
    assert ast.get_docstring(tree), folder
    assert any(
        isinstance(node, ast.Assign)
        and any(getattr(t, "id", None) == "__all__" for t in node.targets)
        for node in tree.body
    ), folder
