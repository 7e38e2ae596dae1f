"""Security issue, item 10: a directory swapped for a symlink between a path's check and its open.

The file tools check a path with its symlinks resolved, then open it. An agent that can also run a
command (or a kernel cell) could swap a checked directory for a link to the outside in between.
A real race is flaky to test, so the moment is made deterministic: ``Workspace.resolve`` (the
check) is wrapped so that, right after it approves a path, ``sub/`` is moved away and replaced by
a link to ``outside/``. Every tool must then refuse, and the outside must be neither shown nor
changed. A link inside the tree that was there all along keeps working.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config.schema import BinaryFormatConfig
from gth_jupyter.tools.fs.binary import make_read_binary_tool
from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.grep import tool as grep_module
from gth_jupyter.tools.grep.tool import make_grep_tool
from tests.tools.conftest import run_call, write

SECRET = "SECRET from outside"
PNG = b"\x89PNG\r\n\x1a\nOUTSIDE-PIXELS"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    write(root / "sub" / "note.txt", "inside note\n")
    write(root / "sub" / "pic.png", b"\x89PNG\r\n\x1a\ninside")
    write(root / "sub" / "inner" / "keep.txt", "inside keep\n")
    write(outside / "note.txt", f"{SECRET}\n")
    write(outside / "only_outside.txt", "a name the agent must not see\n")
    write(outside / "pic.png", PNG)
    write(outside / "inner" / "keep.txt", f"{SECRET}\n")
    return root


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every entry below ``directory`` and its bytes (``None`` for a directory)."""
    return {
        p.relative_to(directory).as_posix(): None if p.is_dir() else p.read_bytes()
        for p in sorted(directory.rglob("*"))
    }


@pytest.fixture
def swap_after_check(root: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], bool]:
    """Right after the first check, ``sub`` becomes a link to ``outside``; returns whether the
    swap happened (so a test knows the check really ran before the open)."""
    check = Workspace.resolve
    swapped: list[bool] = []

    def resolve_then_swap(self: Workspace, requested: str, **kw: Any) -> Path:
        path = check(self, requested, **kw)
        if not swapped:
            swapped.append(True)
            os.rename(root / "sub", root / "sub_moved")
            os.symlink(root.parent / "outside", root / "sub")
        return path

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    return lambda: bool(swapped)


def tools(root: Path) -> list[Any]:
    ws = Workspace.at(root)
    binary = [BinaryFormatConfig.model_validate({"type": "image", "extensions": ["png"]})]
    return [*make_filesystem_tools("all", ws), make_read_binary_tool(ws, binary)]


EDIT = [{"oldText": SECRET, "newText": "overwritten"}]
CALLS = [
    ("read_file", {"path": "sub/note.txt"}),
    ("read_file", {"path": "sub/note.txt", "head": 1, "tail": 1}),
    ("read_file", {"path": "sub/note.txt", "offset": 1, "limit": 5}),
    ("read_multiple_files", {"paths": ["sub/note.txt"]}),
    ("get_file_info", {"path": "sub/note.txt"}),
    ("list_directory", {"path": "sub"}),
    ("list_directory_with_sizes", {"path": "sub"}),
    ("directory_tree", {"path": "sub"}),
    ("gth_read_binary", {"path": "sub/pic.png"}),
    ("write_file", {"path": "sub/note.txt", "content": "overwritten"}),
    ("write_file", {"path": "sub/made/new.txt", "content": "planted"}),
    ("edit_file", {"path": "sub/note.txt", "edits": EDIT}),
    ("create_directory", {"path": "sub/made"}),
    ("move_file", {"source": "sub/note.txt", "destination": "moved.txt"}),
    ("move_file", {"source": "sub/inner", "destination": "moved"}),
    ("delete_file", {"path": "sub/note.txt"}),
    ("delete_directory", {"path": "sub/inner", "recursive": True}),
]


@pytest.mark.parametrize(
    ("name", "args"), CALLS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CALLS)]
)
async def test_a_directory_swapped_for_a_link_after_the_check_is_refused(
    root: Path, swap_after_check: Callable[[], bool], name: str, args: dict[str, Any]
) -> None:
    outside = root.parent / "outside"
    before = snapshot(outside)
    result = await run_call(tools(root), name, args)
    content = str(result.message.content)
    assert swap_after_check()
    assert SECRET not in content and "only_outside" not in content
    assert base64.b64encode(PNG).decode() not in content
    assert "changed into a symlink after it was checked" in content or (
        name == "gth_read_binary" and "blocked by .aiignore" in content
    ), content
    if name != "read_multiple_files":  # that one reports per file inside a normal result
        assert result.message.status == "error"
    assert snapshot(outside) == before
    assert not (root / "moved.txt").exists() and not (root / "moved").exists()


async def test_a_link_inside_the_tree_that_was_there_before_still_works(root: Path) -> None:
    os.symlink(root / "sub", root / "alias")
    read = await run_call(tools(root), "read_file", {"path": "alias/note.txt"})
    assert read.message.status == "success" and read.message.content == "inside note\n"
    edit = [{"oldText": "inside note", "newText": "edited through the alias"}]
    edited = await run_call(tools(root), "edit_file", {"path": "alias/note.txt", "edits": edit})
    assert edited.message.status == "success", edited.message.content
    assert (root / "sub" / "note.txt").read_text() == "edited through the alias\n"
    assert (root / "alias").is_symlink()
    wrote = await run_call(tools(root), "write_file", {"path": "alias/new/x.txt", "content": "x"})
    assert wrote.message.status == "success" and (root / "sub" / "new" / "x.txt").exists()
    listed = await run_call(tools(root), "list_directory", {"path": "alias"})
    assert "[FILE] note.txt" in listed.message.content


async def test_a_file_swapped_for_a_link_is_not_written_through(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last component swapped (not a directory): write_file's O_NOFOLLOW refuses it."""
    check = Workspace.resolve

    def resolve_then_swap(self: Workspace, requested: str, **kw: Any) -> Path:
        path = check(self, requested, **kw)
        (root / "sub" / "note.txt").unlink()
        os.symlink(root.parent / "outside" / "note.txt", root / "sub" / "note.txt")
        return path

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    result = await run_call(tools(root), "write_file", {"path": "sub/note.txt", "content": "x"})
    assert result.message.status == "error"
    assert "changed into a symlink after it was checked" in result.message.content
    assert (root.parent / "outside" / "note.txt").read_text() == f"{SECRET}\n"


async def test_the_grep_fallback_skips_a_directory_swapped_after_its_walk(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk lists ``sub/note.txt``; then ``sub`` becomes a link to the outside before the
    worker opens the file: the file is skipped, not read through the link."""
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: None)
    walk = grep_module.candidates

    def walk_then_swap(*args: Any, **kw: Any) -> list[str]:
        files = walk(*args, **kw)
        os.rename(root / "sub", root / "sub_moved")
        os.symlink(root.parent / "outside", root / "sub")
        return files

    monkeypatch.setattr(grep_module, "candidates", walk_then_swap)
    tool = make_grep_tool(Workspace.at(root), {"fileSet": "all"})
    result = await run_call([tool], "gth_grep", {"pattern": "SECRET|inside"})
    assert result.message.content == "No matches found"
