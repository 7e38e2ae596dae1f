"""Issue 8, item 10: the rest of the file surface read with an attacker's eyes.

- ``gth_grep``: a pattern, include glob or path starting with ``-`` must never become a ripgrep
  option (``--pre=<program>`` would run a program); ripgrep's own error text names files, so it
  must not reach the model when one of them is hidden by ``.aiignore``; the fallback scanner must
  not load a whole file.
- ``edit_file`` / ``create_directory`` / ``write_file``: paths outside the root (also through a
  dangling link), behind ``.aiignore``, or at the agent's own settings in another letter case (the
  same file on macOS and Windows) are refused.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.grep import tool as grep_module
from gth_jupyter.tools.grep._scan import scan
from gth_jupyter.tools.grep.tool import GrepArgs, grep, make_grep_tool
from tests.tools.conftest import run_call, write

RG = shutil.which("rg")


@pytest.fixture(params=["ripgrep", "fallback"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "ripgrep" and RG is None:
        pytest.skip("ripgrep is not installed")
    if request.param == "fallback":
        monkeypatch.setattr(grep_module, "find_ripgrep", lambda: None)
    return str(request.param)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    canary = tmp_path / "PWNED"
    write(root / "evil.sh", f'#!/bin/sh\ntouch {canary}\ncat "$1"\n')
    (root / "evil.sh").chmod(0o755)
    write(root / "notes.txt", "use --pre=./evil.sh to preprocess\n-e is an option\n")
    write(root / "-rf" / "x.txt", "needle in a dash directory\n")
    write(root / ".aiignore", "secrets/\n")
    write(root / "secrets" / "key.pem", "needle secret\n")
    return root


async def search(root: Path, **args: Any) -> tuple[str, str]:
    tool = make_grep_tool(Workspace.at(root), {"fileSet": "all"})
    result = await run_call([tool], "gth_grep", args)
    return str(result.message.status), str(result.message.content)


async def test_a_pattern_starting_with_a_dash_is_searched_for_not_obeyed(
    root: Path, engine: str
) -> None:
    status, out = await search(root, pattern="--pre=./evil.sh")
    assert status == "success"
    assert out == "Found 1 matches\nnotes.txt:\n  Line 1: use --pre=./evil.sh to preprocess"
    status, out = await search(root, pattern="-e is")
    assert "notes.txt:\n  Line 2: -e is an option" in out
    assert not (root.parent / "PWNED").exists()


async def test_an_include_or_path_starting_with_a_dash_is_not_an_option(
    root: Path, engine: str
) -> None:
    status, out = await search(root, pattern="needle", include="--pre=./evil.sh")
    assert status == "success" and out == "No matches found"
    status, out = await search(root, pattern="needle", path="-rf")
    assert out == "Found 1 matches\n-rf/x.txt:\n  Line 1: needle in a dash directory"
    status, out = await search(root, pattern="needle", path="--pre=./evil.sh")
    assert status == "error" and out == "Path not found: --pre=./evil.sh"
    assert not (root.parent / "PWNED").exists()


async def test_ripgrep_errors_naming_files_do_not_reach_the_model(
    root: Path, tmp_path: Path
) -> None:
    """A file rg cannot read (mode 000 as a normal user) is named in its error output; here a
    stand-in rg prints exactly that message, since the tests may run as root."""
    fake = write(
        tmp_path / "rg",
        "#!/bin/sh\necho 'rg: ./secrets/key.pem: Permission denied (os error 13)' >&2\nexit 2\n",
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(ToolException) as caught:
        await grep(Workspace.at(root), GrepArgs(pattern="zzz"), rg=str(fake))
    assert "key.pem" not in str(caught.value) and "secrets" not in str(caught.value)
    assert str(caught.value) == "Search failed: rg exited with 2 (some files could not be searched)"


@pytest.mark.skipif(RG is None, reason="ripgrep is not installed")
async def test_a_bad_regex_still_says_what_is_wrong(root: Path) -> None:
    status, out = await search(root, pattern="(")
    assert status == "error" and "regex parse error" in out


def test_the_fallback_scanner_does_not_load_whole_files(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.write(b"x" * (8 * 1024 * 1024) + b"\nneedle after a long line\n")
        f.truncate(300 * 1024 * 1024)  # then a 300 MB hole: NUL bytes, a binary file
    text = write(tmp_path / "text.log", "y" * (8 * 1024 * 1024) + "\nneedle too\n")
    tracemalloc.start()
    try:
        found = scan(
            tmp_path,
            tmp_path,
            re.compile("needle"),
            file_set="all",
            include=None,
            limit=10,
            hidden=lambda rel: False,
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(m.path, m.line) for m in found] == [(text.name, 2)]  # the binary file is skipped
    assert peak < 4 * 1024 * 1024, peak


def file_tools(root: Path) -> list[Any]:
    return make_filesystem_tools("all", Workspace.at(root))


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": ".AIIGNORE", "content": ""}),
        ("write_file", {"path": ".Gsloth.Config.json", "content": "{}"}),
        ("create_directory", {"path": ".GSLOTH/.gsloth-settings"}),
        ("edit_file", {"path": ".AiIgnore", "edits": [{"oldText": "a", "newText": "b"}]}),
        ("move_file", {"source": "notes.txt", "destination": ".Aiignore"}),
    ],
)
async def test_the_agents_own_settings_are_protected_in_any_letter_case(
    root: Path, name: str, args: dict[str, Any]
) -> None:
    write(root / ".AiIgnore", "a\n")  # on a case-insensitive disk, this is .aiignore itself
    result = await run_call(file_tools(root), name, args)
    assert result.message.status == "error"
    assert "holds the agent's own settings" in str(result.message.content)
    assert (root / ".AiIgnore").read_text() == "a\n"


@pytest.mark.parametrize(
    ("name", "args", "reason"),
    [
        ("create_directory", {"path": "dangling/sub"}, "outside allowed directories"),
        ("create_directory", {"path": "../escape"}, "outside allowed directories"),
        ("create_directory", {"path": "secrets/more"}, "hidden by .aiignore"),
        ("create_directory", {"path": "~/gth_escape"}, "outside allowed directories"),
        (
            "edit_file",
            {"path": "key_link", "edits": [{"oldText": "needle", "newText": "x"}], "dryRun": True},
            "hidden by .aiignore",
        ),
        (
            "edit_file",
            {"path": "dangling", "edits": [{"oldText": "a", "newText": "b"}]},
            "outside allowed directories",
        ),
    ],
)
async def test_edits_and_new_directories_stay_inside_and_visible(
    root: Path, name: str, args: dict[str, Any], reason: str
) -> None:
    os.symlink(root.parent / "elsewhere", root / "dangling")  # a link to a missing outside dir
    os.symlink(root / "secrets" / "key.pem", root / "key_link")
    result = await run_call(file_tools(root), name, args)
    assert result.message.status == "error" and reason in str(result.message.content)
    assert "needle secret" not in str(result.message.content)
    assert not (root.parent / "elsewhere").exists() and not (root / "secrets" / "more").exists()
    assert not (Path.home() / "gth_escape").exists()
    assert (root / "secrets" / "key.pem").read_text() == "needle secret\n"


async def test_aiignore_ignores_letter_case_where_the_disk_does(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On macOS, ``SECRETS/key.pem`` opens ``secrets/key.pem``. Linux disks are case-sensitive,
    so the probe is stood in for and the upper-case path made a real file."""
    from gth_jupyter.tools.fs import workspace

    assert workspace.case_insensitive(root) is False  # this disk tells the two apart
    write(root / "SECRETS" / "key.pem", "needle secret\n")
    monkeypatch.setattr(workspace, "case_insensitive", lambda directory: True)
    result = await run_call(file_tools(root), "read_file", {"path": "SECRETS/key.pem"})
    assert result.message.status == "error" and "hidden by .aiignore" in result.message.content
