"""gth_grep against a real tree, with ripgrep and with the in-process fallback: same answers."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.grep import tool as grep_module
from gth_jupyter.tools.grep.tool import make_grep_tool

from .conftest import run_call, write

RG = shutil.which("rg")


@pytest.fixture(params=["ripgrep", "fallback"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "ripgrep":
        if RG is None:
            pytest.skip("ripgrep is not installed (apt-get install ripgrep)")
    else:
        monkeypatch.setattr(grep_module, "find_ripgrep", lambda: None)
    return str(request.param)


def grep_tool(root: Path, **settings: Any) -> BaseTool:
    return make_grep_tool(Workspace.at(root), settings)


def files_of(out: str) -> list[str]:
    return [line[:-1] for line in out.splitlines() if line.endswith(":") and line[0] != " "]


async def search(root: Path, settings: dict[str, Any] | None = None, **args: Any) -> str:
    result = await grep_tool(root, **(settings or {})).ainvoke(args)
    return str(result)


async def test_gitignore_file_set_is_what_git_would_track(tree: Path, engine: str) -> None:
    out = await search(tree, pattern="needle")
    assert out.splitlines()[0] == "Found 6 matches"
    files = files_of(out)
    # Sorted by path; .gitignore (also nested, with a re-include) and dot-files respected.
    assert files == ["README.md", "config/dev.env", "keep.log", "src/app.py"]
    assert "src/app.py:\n  Line 3: def needle():\n  Line 4:     return 'needle'" in out


async def test_all_file_set_searches_ignored_and_hidden_but_not_noise(
    tree: Path, engine: str
) -> None:
    out = await search(tree, {"fileSet": "all"}, pattern="needle")
    files = files_of(out)
    assert files == [
        ".env",
        ".hidden/notes.txt",
        "README.md",
        "build/out.txt",
        "config/dev.env",
        "keep.log",
        "src/app.py",
        "src/util/generated.py",
        "trace.log",
    ]


async def test_aiignore_hides_files_and_whole_directories_in_every_file_set(
    tree: Path, engine: str
) -> None:
    for file_set in ("gitignore", "all"):
        out = await search(tree, {"fileSet": file_set}, pattern="needle (deep )?(secret|key|prod)")
        assert "secrets/" not in out and "id.key" not in out and "prod.env" not in out
        assert out == "No matches found"


async def test_output_format_truncates_long_lines_and_caps_the_count(
    tree: Path, engine: str
) -> None:
    out = await search(tree, pattern="needle", path="README.md")
    line = out.splitlines()[-1]
    assert line.startswith("  Line 2: xxx") and line.endswith(" … (line truncated)")
    assert len(line) == len("  Line 2: ") + 250 + len(" … (line truncated)")
    capped = await search(tree, pattern="needle", limit=2)
    assert (
        capped
        == "Found 2 matches\nREADME.md:\n  Line 1: A needle in a haystack.\n  Line 2: "
        + ("x" * 250 + " … (line truncated)")
    )


async def test_include_glob_and_sub_path(tree: Path, engine: str) -> None:
    out = await search(tree, pattern="NEEDLE|needle", include="*.py")
    assert files_of(out) == ["src/app.py", "src/util/helpers.py"]
    out = await search(tree, pattern="NEEDLE", path="src/util")
    assert out == "Found 1 matches\nsrc/util/helpers.py:\n  Line 2: NEEDLE = 1"


@pytest.mark.parametrize("path", ["..", "../outside", "linked_out", "loot_link.txt", "/etc"])
async def test_paths_escaping_the_working_directory_are_refused(
    tree: Path, engine: str, path: str
) -> None:
    out = await search(tree, pattern="needle", path=path)
    root = Workspace.at(tree).root
    assert out == f"Refusing to search '{path}': path escapes the working directory ({root})."


async def test_symlinks_inside_the_tree_are_not_followed_while_walking(
    tree: Path, engine: str
) -> None:
    out = await search(tree, {"fileSet": "all"}, pattern="outside")
    assert out == "No matches found"


async def test_missing_path_and_bad_regex(tree: Path, engine: str) -> None:
    assert await search(tree, pattern="x", path="nope") == "Path not found: nope"
    assert (await search(tree, pattern="(unclosed")).startswith("Search failed:")


async def test_both_engines_give_identical_output(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if RG is None:
        pytest.skip("ripgrep is not installed")
    write(tree / "src" / "many.txt", "".join(f"needle {i}\n" for i in range(150)))
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({}, {"pattern": "needle"}),
        ({"fileSet": "all"}, {"pattern": "needle"}),
        ({}, {"pattern": r"^def \w+", "include": "*.py"}),
        ({"fileSet": "all"}, {"pattern": "needle", "limit": 7}),
        ({}, {"pattern": "needle", "path": "src"}),
        ({}, {"pattern": "zzz-not-there"}),
    ]
    with_rg = [await search(tree, s, **a) for s, a in cases]
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: None)
    without = [await search(tree, s, **a) for s, a in cases]
    assert with_rg == without


async def test_a_refusal_is_an_error_result(tree: Path) -> None:
    result = await run_call([grep_tool(tree)], "gth_grep", {"pattern": "x", "path": "/etc"})
    assert result.message.status == "error"
    assert result.message.content.startswith("Refusing to search '/etc'")
    assert grep_tool(tree).metadata == {"gth_kind": "read"}
