"""The file tools on a real tree: confinement, .aiignore, read caps, edits, and the selection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from gth_jupyter.tools.fs._read import READ_TOOLS
from gth_jupyter.tools.fs._write import WRITE_TOOLS
from gth_jupyter.tools.fs.tools import filesystem_tool_names, make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace

from .conftest import run_call, write


def tools(root: Path, setting: Any = "all") -> dict[str, BaseTool]:
    return {t.name: t for t in make_filesystem_tools(setting, Workspace.at(root))}


async def call(root: Path, name: str, **args: Any) -> str:
    return str(await tools(root)[name].ainvoke(args))


def test_the_filesystem_setting_selects_tools() -> None:
    assert filesystem_tool_names("none") == []
    assert filesystem_tool_names("read") == list(READ_TOOLS)
    assert filesystem_tool_names("all") == [*READ_TOOLS, *WRITE_TOOLS]
    assert filesystem_tool_names(["read", "write_file"]) == [*READ_TOOLS, "write_file"]
    assert filesystem_tool_names(["edit_file", "read_file", "nonsense"]) == [
        "read_file",
        "edit_file",
    ]


def test_kinds_tell_reads_from_writes(tree: Path) -> None:
    kinds = {name: tool.metadata for name, tool in tools(tree).items()}
    assert all(kinds[n] == {"gth_kind": "read"} for n in READ_TOOLS)
    assert all(kinds[n]["gth_kind"] == "write" for n in WRITE_TOOLS)
    # The tools that name a file they write are code when it is a module's name (kinds.py).
    assert {n for n in WRITE_TOOLS if "gth_code_when" in kinds[n]} == {
        "write_file",
        "edit_file",
        "move_file",
    }


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside/loot.txt", "path outside allowed directories"),
        ("/etc/passwd", "path outside allowed directories"),
        ("linked_out/loot.txt", "symlink target outside allowed directories"),
        ("loot_link.txt", "symlink target outside allowed directories"),
        ("secrets/s.txt", "hidden by .aiignore"),
        ("deep/secrets/s.txt", "hidden by .aiignore"),
        ("id.key", "hidden by .aiignore"),
        ("config/prod.env", "hidden by .aiignore"),
    ],
)
async def test_reads_outside_the_tree_or_behind_aiignore_are_refused(
    tree: Path, path: str, reason: str
) -> None:
    result = await run_call(list(tools(tree).values()), "read_file", {"path": path})
    assert result.message.status == "error"
    assert result.message.content.startswith(f"Error reading file {path}: Access denied")
    assert reason in result.message.content
    assert "needle" not in result.message.content


async def test_read_file_windows_and_caps(tree: Path) -> None:
    write(tree / "long.txt", "".join(f"line {i}\n" for i in range(1, 2501)))
    whole = await call(tree, "read_file", path="long.txt")
    assert whole.splitlines()[1999] == "line 2000"
    assert whole.endswith("resume with offset:2001 (and an optional limit)] ...")
    window = await call(tree, "read_file", path="long.txt", offset=2001, limit=3)
    assert window == "line 2001\nline 2002\nline 2003"
    assert await call(tree, "read_file", path="long.txt", head=2) == "line 1\nline 2"
    assert await call(tree, "read_file", path="long.txt", tail=1) == "line 2500"
    both = await call(tree, "read_file", path="long.txt", head=1, tail=1)
    assert both == "line 1\n... [2498 lines skipped] ...\nline 2500"
    assert "not both" in await call(tree, "read_file", path="long.txt", offset=1, head=1)
    past = await call(tree, "read_file", path="long.txt", offset=9999)
    assert past == "[read_file: offset 9999 is past end of file (2500 lines total)]"
    write(tree / "wide.txt", "y" * 5000)
    assert (await call(tree, "read_file", path="wide.txt")).endswith(
        "... (line truncated to 2000 chars)"
    )
    assert await call(tree, "read_file", path="src/app.py") == (tree / "src/app.py").read_text()


async def test_listings_leave_hidden_entries_out(tree: Path) -> None:
    listing = (await call(tree, "list_directory", path=".")).splitlines()
    assert "[DIR] src" in listing and "[FILE] README.md" in listing
    assert "[DIR] secrets" not in listing and "[FILE] id.key" not in listing
    sized = await call(tree, "list_directory_with_sizes", path="src/util")
    assert "[FILE] helpers.py" in sized and "Total: 3 files, 0 directories" in sized
    nodes = json.loads(await call(tree, "directory_tree", path="."))
    names = {n["name"]: n for n in nodes}
    assert "secrets" not in names and "id.key" not in names
    assert names["node_modules"] == {"name": "node_modules", "type": "directory", "ignored": True}
    assert {c["name"] for c in names["config"]["children"]} == {"dev.env"}
    found = await call(tree, "search_files", path=".", pattern="S.TXT")
    assert found == ".hidden/notes.txt"  # case-insensitive; both secrets/s.txt are hidden
    assert await call(tree, "search_files", path=".", pattern="zzz") == "No matches found"
    assert await call(tree, "search_files", path=".", pattern="help") == "src/util/helpers.py"
    excluded = await call(tree, "search_files", path=".", pattern=".py", excludePatterns=["util"])
    assert excluded == "src/app.py"
    info = await call(tree, "get_file_info", path="src/app.py")
    assert "isFile: true" in info and "size: " in info
    assert (
        await call(tree, "list_allowed_directories")
        == f"Allowed directories:\n{Workspace.at(tree).root}"
    )


async def test_write_edit_move_delete(tree: Path) -> None:
    assert await call(tree, "write_file", path="new/dir/a.txt", content="one\n  two\n") == (
        "Successfully wrote to new/dir/a.txt"
    )
    edited = await call(
        tree, "edit_file", path="new/dir/a.txt", edits=[{"oldText": "one", "newText": "ONE"}]
    )
    assert edited.startswith("edit 1: replaced 1 occurrence(s)\n\n```diff\n")
    assert "-one\n+ONE\n" in edited
    fuzzy = await call(
        tree, "edit_file", path="new/dir/a.txt", edits=[{"oldText": "two", "newText": "2"}]
    )
    assert "replaced 1 occurrence" in fuzzy and (tree / "new/dir/a.txt").read_text() == "ONE\n  2\n"
    dry = await call(
        tree,
        "edit_file",
        path="new/dir/a.txt",
        edits=[{"oldText": "ONE", "newText": "uno"}],
        dryRun=True,
    )
    assert "+uno" in dry and (tree / "new/dir/a.txt").read_text() == "ONE\n  2\n"
    write(tree / "dup.txt", "a\na\n")
    ambiguous = await run_call(
        list(tools(tree).values()),
        "edit_file",
        {"path": "dup.txt", "edits": [{"oldText": "a", "newText": "b"}]},
    )
    assert ambiguous.message.status == "error"
    assert "found 2 occurrences" in ambiguous.message.content
    assert await call(tree, "move_file", source="dup.txt", destination="moved.txt") == (
        "Successfully moved dup.txt to moved.txt"
    )
    assert (
        await call(tree, "delete_file", path="moved.txt") == "Successfully deleted file: moved.txt"
    )
    assert (
        await call(tree, "create_directory", path="empty") == "Successfully created directory empty"
    )
    assert await call(tree, "delete_directory", path="empty") == (
        "Successfully deleted empty directory: empty"
    )
    assert "Directory not empty" in str(
        await tools(tree)["delete_directory"].ainvoke({"path": "new"})
    )


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": "../escape.txt", "content": "x"}),
        ("write_file", {"path": "linked_out/planted.txt", "content": "x"}),
        ("write_file", {"path": ".aiignore", "content": ""}),
        ("write_file", {"path": ".gsloth.config.json", "content": "{}"}),
        ("write_file", {"path": "secrets/new.txt", "content": "x"}),
        ("delete_directory", {"path": ".", "recursive": True}),
        ("move_file", {"source": "README.md", "destination": "../README.md"}),
    ],
)
async def test_writes_that_would_escape_or_widen_permissions_are_refused(
    tree: Path, name: str, args: dict[str, Any]
) -> None:
    before = sorted(p.name for p in tree.parent.rglob("*"))
    result = await run_call(list(tools(tree).values()), name, args)
    assert result.message.status == "error", result.message.content
    assert sorted(p.name for p in tree.parent.rglob("*")) == before
    assert (tree / ".aiignore").read_text().startswith("# private")
