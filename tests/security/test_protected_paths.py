"""Round three's review, item 1: the agent wrote ``sub/.gsloth.config.py``, which the kernel of
a notebook in ``sub/`` ran on its next ``%gth``. No write tool may create or change the agent's
own settings (``.aiignore``, every Gaunt Sloth name) or what Python, IPython and Jupyter run by
themselves, at any depth, in any letter case, through ``..`` or a symlink; moving or deleting a
directory that holds one is refused too; and a Python file named like an installed module is
gated as code (``tests/server/test_module_writes.py`` holds the gate's side)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.tools.fs.protected import names_module, protected_reason
from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.kinds import kind_of_call
from tests.tools.conftest import run_call, write

#: Every name the review planted, and its class, each at depth 1 and 3.
SETTINGS = [
    ".gsloth.config.py",
    ".gsloth.config.json",
    ".gsloth.config.jsonc",
    ".gsloth/.gsloth-settings/.gsloth.config.json",
    ".gsloth-settings/x.json",
    ".gsloth.guidelines.md",
    ".aiignore",
]
RUN_BY_THEMSELVES = [
    ".ipython/profile_default/startup/00-evil.py",
    ".ipython/profile_default/ipython_config.py",
    ".jupyter/jupyter_server_config.py",
    ".local/share/jupyter/kernels/evil/kernel.json",
    ".venv/lib/python3.11/site-packages/evil.py",
    "evil.pth",
    "sitecustomize.py",
    "usercustomize.py",
]
PREFIXES = ["sub/", "a/b/c/"]


def spellings(name: str) -> list[str]:
    """``name`` at depth one and three, in another letter case, and through ``..``."""
    out = [prefix + name for prefix in PREFIXES]
    out.append("sub/" + name.upper())
    out.append("sub/x/../" + name.swapcase())
    return out


CASES = [path for name in (*SETTINGS, *RUN_BY_THEMSELVES) for path in spellings(name)]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root / "sub" / "notebook.ipynb", "{}")
    write(root / "notes.txt", "notes\n")
    return root


def listing(root: Path) -> list[Path]:
    return sorted(root.rglob("*"))


def file_tools(root: Path) -> list[Any]:
    return make_filesystem_tools("all", Workspace.at(root))


async def refused(root: Path, name: str, args: dict[str, Any]) -> str:
    result = await run_call(file_tools(root), name, args)
    assert result.message.status == "error", result.message.content
    return str(result.message.content)


@pytest.mark.parametrize("path", CASES)
async def test_no_write_tool_creates_a_protected_path_at_any_depth(root: Path, path: str) -> None:
    before = listing(root)
    content = await refused(root, "write_file", {"path": path, "content": "def configure(c): 1"})
    assert "Access denied" in content
    await refused(root, "create_directory", {"path": path})
    await refused(root, "move_file", {"source": "notes.txt", "destination": path})
    assert listing(root) == before  # nothing written, nothing created


@pytest.mark.parametrize("name", SETTINGS[:3] + RUN_BY_THEMSELVES[:1])
async def test_an_existing_protected_file_is_neither_edited_moved_nor_deleted(
    root: Path, name: str
) -> None:
    target = root / "sub" / name
    write(target, "original\n")
    rel = f"sub/{name}"
    edit = {"path": rel, "edits": [{"oldText": "original", "newText": "planted"}]}
    assert "holds" in await refused(root, "edit_file", edit) or "runs" in await refused(
        root, "edit_file", edit
    )
    await refused(root, "move_file", {"source": rel, "destination": "sub/moved.txt"})
    await refused(root, "delete_file", {"path": rel})
    # A directory holding it can be neither moved (which would carry it elsewhere) nor deleted.
    await refused(root, "move_file", {"source": "sub", "destination": "sub2"})
    await refused(root, "delete_directory", {"path": "sub", "recursive": True})
    assert target.read_text() == "original\n"


async def test_a_symlink_to_a_protected_path_is_not_a_way_in(root: Path) -> None:
    write(root / "sub" / ".gsloth.config.json", "{}")
    os.symlink(root / "sub" / ".gsloth.config.json", root / "innocent.json")
    os.symlink(root / "sub", root / "alias")
    (root / "sub" / ".ipython").mkdir()
    os.symlink(root / "sub" / ".ipython", root / "profile")
    await refused(root, "write_file", {"path": "innocent.json", "content": '{"approvals": 1}'})
    await refused(root, "write_file", {"path": "alias/.GSLOTH.CONFIG.PY", "content": "x"})
    await refused(root, "write_file", {"path": "profile/startup/a.py", "content": "x"})
    assert (root / "sub" / ".gsloth.config.json").read_text() == "{}"
    assert not (root / "sub" / ".gsloth.config.py").exists()
    assert not (root / "sub" / ".ipython" / "startup").exists()


async def test_ordinary_files_are_still_written(root: Path) -> None:
    result = await run_call(
        file_tools(root), "write_file", {"path": "sub/gsloth-notes.md", "content": "ok"}
    )
    assert result.message.status == "success"
    assert (root / "sub" / "gsloth-notes.md").read_text() == "ok"


def test_the_rules_fold_case_unicode_and_trailing_dots() -> None:
    assert protected_reason("sub/.GSloth.Config.JSON") is not None
    assert protected_reason("sub/.aiignore.") is not None  # Windows drops the trailing dot
    assert protected_reason("sub/.aiignore ") is not None
    assert protected_reason("sub/SiteCustomize.py") is not None
    assert protected_reason("notes/gsloth.md") is None
    assert protected_reason("data/model.json") is None


@pytest.mark.parametrize(
    ("path", "shadows"),
    [
        ("pandas.py", True),
        ("sub/deep/PANDAS.py", True),
        ("numpy/__init__.py", True),
        ("json.py", True),  # the standard library
        ("os.pyc", True),
        ("analysis_of_sales.py", False),
        ("pandas.txt", False),
        ("notes/pandas.md", False),
    ],
)
def test_a_module_name_is_code(path: str, shadows: bool) -> None:
    assert names_module(path) is shadows
    (write_file,) = [
        t for t in make_filesystem_tools("all", Workspace.at(Path("."))) if t.name == "write_file"
    ]
    expected = "code" if shadows else "write"
    assert kind_of_call(write_file, {"path": path, "content": "import os"}) == expected
