"""The kernel engine stands alone: it imports no other layer of gth_jupyter but the run contract,
the ground every layer stands on (its errors are coded errors)."""

from __future__ import annotations

import ast
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[2] / "gth_jupyter" / "kernel"


def test_the_kernel_package_imports_only_itself_and_the_contract_of_gth_jupyter() -> None:
    for path in sorted(KERNEL.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("gth_jupyter"):
                    assert name.startswith(("gth_jupyter.kernel", "gth_jupyter.contract")), (
                        path.name,
                        name,
                    )


def test_the_inspector_sent_to_the_kernel_uses_the_standard_library_only() -> None:
    tree = ast.parse((KERNEL / "_inspector.py").read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {
        "__future__",
        "itertools",
        "json",
        "keyword",
        "reprlib",
        "sys",
        "types",
        "typing",
    }
