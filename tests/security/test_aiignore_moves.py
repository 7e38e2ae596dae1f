"""Issue 8, item 3: .aiignore must not be bypassed by moving or deleting a parent, or by links.

The repro: with ``.aiignore`` holding ``conf/prod.env``, ``move_file conf -> conf2`` made
``conf2/prod.env`` readable, and ``delete_directory sub`` (recursive) deleted an ignored
``sub/cert.pem``. Listings described symlinks to places the agent may not look at (a directory
outside, the size of a file outside or of a hidden file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from tests.tools.conftest import run_call, write


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root / ".aiignore", "conf/prod.env\nsub/cert.pem\n")
    write(root / "conf" / "prod.env", "PASSWORD=hunter2\n")
    write(root / "conf" / "app.toml", "debug = false\n")
    write(root / "sub" / "cert.pem", "-----BEGIN PRIVATE KEY-----\n")
    write(root / "sub" / "notes.txt", "notes\n")
    write(root / "plain" / "a.txt", "a\n")
    write(root / "visible.txt", "hello\n")
    write(tmp_path / "outside" / "big.bin", b"o" * 12345)
    os.symlink(tmp_path / "outside", root / "out_dir")
    os.symlink(tmp_path / "outside" / "big.bin", root / "out_file")
    os.symlink(root / "conf" / "prod.env", root / "hidden_link")
    os.symlink(root / "missing", root / "dangling")
    os.symlink(root / "visible.txt", root / "ok_link")
    os.symlink(root / "conf", root / "conf_alias")
    return root


def tools(root: Path) -> list[BaseTool]:
    return make_filesystem_tools("all", Workspace.at(root))


async def call(root: Path, name: str, **args: Any) -> tuple[str, str]:
    result = await run_call(tools(root), name, args)
    return str(result.message.status), str(result.message.content)


async def test_moving_a_directory_holding_an_ignored_path_is_refused(root: Path) -> None:
    status, text = await call(root, "move_file", source="conf", destination="conf2")
    assert status == "error"
    assert text == (
        "Error moving conf to conf2: Access denied - conf contains paths hidden by .aiignore, "
        "so it cannot be moved as a whole"
    )
    assert (root / "conf" / "prod.env").is_file() and not (root / "conf2").exists()
    status, text = await call(root, "read_file", path="conf2/prod.env")
    assert status == "error" and "hunter2" not in text
    # Through a link to it, too (a move resolves the link and would move the real directory).
    status, text = await call(root, "move_file", source="conf_alias", destination="conf3")
    assert status == "error" and "prod.env" not in text
    assert (root / "conf" / "prod.env").is_file()


async def test_recursive_delete_of_a_directory_holding_an_ignored_path_is_refused(
    root: Path,
) -> None:
    status, text = await call(root, "delete_directory", path="sub", recursive=True)
    assert status == "error"
    assert "contains paths hidden by .aiignore" in text and "cert.pem" not in text
    assert (root / "sub" / "cert.pem").is_file() and (root / "sub" / "notes.txt").is_file()


async def test_directories_without_ignored_paths_still_move_and_delete(root: Path) -> None:
    assert await call(root, "move_file", source="plain", destination="plain2") == (
        "success",
        "Successfully moved plain to plain2",
    )
    assert (root / "plain2" / "a.txt").is_file()
    status, _ = await call(root, "delete_directory", path="plain2", recursive=True)
    assert status == "success" and not (root / "plain2").exists()
    assert (await call(root, "move_file", source="conf/app.toml", destination="app.toml"))[0] == (
        "success"
    )


async def test_listings_show_links_to_forbidden_places_as_bare_links(root: Path) -> None:
    _, listing = await call(root, "list_directory", path=".")
    lines = listing.splitlines()
    for name in ("out_dir", "out_file", "hidden_link", "dangling"):
        assert f"[LINK] {name}" in lines
    assert "[FILE] ok_link" in lines and "[DIR] conf_alias" in lines

    _, sized = await call(root, "list_directory_with_sizes", path=".")
    rows = {line.split()[1]: line for line in sized.splitlines() if line.startswith("[")}
    assert rows["out_file"].split() == ["[LINK]", "out_file"]  # no size
    assert rows["hidden_link"].split() == ["[LINK]", "hidden_link"]
    assert "12.06 KB" not in sized and "12345" not in sized

    _, tree = await call(root, "directory_tree", path=".")
    nodes = {node["name"]: node for node in json.loads(tree)}
    for name in ("out_dir", "out_file", "hidden_link", "dangling"):
        assert nodes[name] == {"name": name, "type": "link"}


@pytest.mark.parametrize("name", ["out_file", "out_dir", "hidden_link", "dangling"])
async def test_file_info_of_such_a_link_says_only_that_it_is_a_link(root: Path, name: str) -> None:
    status, text = await call(root, "get_file_info", path=name)
    assert status == "success" and text.startswith("isSymbolicLink: true")
    assert "size" not in text and "isDirectory" not in text and "outside/" not in text


async def test_file_info_of_an_ordinary_link_describes_its_target(root: Path) -> None:
    _, text = await call(root, "get_file_info", path="ok_link")
    assert "size: 6" in text and "isFile: true" in text


async def test_search_files_never_lists_an_ignored_name_through_a_link(root: Path) -> None:
    _, everywhere = await call(root, "search_files", path=".", pattern="prod")
    assert everywhere == "No matches found"
    _, via_alias = await call(root, "search_files", path="conf_alias", pattern="prod")
    assert via_alias == "No matches found"
    status, outside = await call(root, "search_files", path="out_dir", pattern="big")
    assert status == "error" and "big.bin" not in outside
