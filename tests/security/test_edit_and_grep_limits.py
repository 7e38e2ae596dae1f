"""Security issue, item 10: ``edit_file`` holds no file past its limit; the grep fallback stops.

- ``edit_file`` on a 200 MB file is refused from the open file's size, before a byte is read, so
  memory stays small and the file is untouched; a file under the limit is edited through a
  temporary file renamed over it, keeping its permissions and leaving nothing behind.
- ``gth_grep`` without ripgrep matches with Python's ``re``, which backtracks: ``(a+)+$`` against
  thirty ``a`` and a ``b`` would run for hours. The worker doing the matching is stopped and the
  tool says why; a slow but progressing search is not stopped.
"""

from __future__ import annotations

import math
import os
import re
import stat
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.tools.fs._edit import EDIT_MAX_BYTES
from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.grep import _fallback
from gth_jupyter.tools.grep import tool as grep_module
from gth_jupyter.tools.grep.tool import make_grep_tool
from tests.tools.conftest import run_call, write


def tool(root: Path, name: str) -> Any:
    return next(t for t in make_filesystem_tools("all", Workspace.at(root)) if t.name == name)


async def test_edit_file_refuses_a_file_over_its_limit_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        f.write(b"needle at the start\n")
        f.truncate(200 * 1024 * 1024)  # a 200 MB file that costs no disk
    before = big.stat()
    edit = tool(tmp_path, "edit_file")
    tracemalloc.start()
    try:
        out = await edit.ainvoke(
            {"path": "big.log", "edits": [{"oldText": "needle", "newText": "pin"}]}
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "over edit_file's limit of 4194304 bytes" in out and "NOT read or modified" in out
    assert peak < 2 * 1024 * 1024, peak  # the whole file would be 200 MB (and more as text)
    after = big.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    with big.open("rb") as f:
        assert f.read(20) == b"needle at the start\n"


async def test_edit_file_under_the_limit_replaces_the_file_whole_and_keeps_its_mode(
    tmp_path: Path,
) -> None:
    body = "x" * 80 + "\n"
    text = "head\n" + body * ((EDIT_MAX_BYTES - 100) // len(body)) + "tail\n"
    path = write(tmp_path / "data.txt", text)
    path.chmod(0o640)
    result = await run_call(
        make_filesystem_tools("all", Workspace.at(tmp_path)),
        "edit_file",
        {"path": "data.txt", "edits": [{"oldText": "tail", "newText": "TAIL"}]},
    )
    assert result.message.status == "success", result.message.content
    assert path.read_text() == text.replace("tail", "TAIL")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["data.txt"]  # no temporary file left behind


def children() -> set[int]:
    """The ids of this process's live child processes (psutil: ipykernel's dependency)."""
    import psutil

    return {p.pid for p in psutil.Process().children()}


@pytest.fixture
def no_ripgrep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grep_module, "find_ripgrep", lambda: None)


async def test_a_backtracking_regex_in_the_fallback_is_stopped_with_a_timeout_error(
    tmp_path: Path, no_ripgrep: None
) -> None:
    write(tmp_path / "fine.txt", "nothing to see\n")
    write(tmp_path / "trap.txt", "a" * 30 + "b\n")
    before = children()
    started = time.monotonic()
    result = await run_call([make_grep_tool(Workspace.at(tmp_path), {})], "gth_grep", {
        "pattern": "(a+)+$"
    })  # fmt: skip
    took = time.monotonic() - started
    content = str(result.message.content)
    assert result.message.status == "error"
    assert "Search failed: the regular expression ran for more than 5s" in content
    assert "of trap.txt" in content and "timeout" in content
    # On the old in-process scan this call ran for hours; here it ends just after the timeout.
    assert took < _fallback.MATCH_TIMEOUT_S + 15, took
    assert children() <= before  # the stuck worker was killed and reaped


async def test_a_slow_search_that_keeps_making_progress_is_not_stopped(
    tmp_path: Path, no_ripgrep: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each line takes a moment, the whole search longer than the timeout: it completes."""
    monkeypatch.setattr(_fallback, "MATCH_TIMEOUT_S", 1.0)
    line = "a" * 18 + "b"
    regex = re.compile("(a+)+$")
    started = time.monotonic()
    for _ in range(3):
        regex.search(line)
    per_line = (time.monotonic() - started) / 3
    lines = math.ceil(2.5 / per_line)  # about 2.5 s of matching in all
    write(tmp_path / "slow.txt", (line + "\n") * lines + "needle\n")
    result = await run_call(
        [make_grep_tool(Workspace.at(tmp_path), {})], "gth_grep", {"pattern": "(a+)+$|needle"}
    )
    assert result.message.status == "success", result.message.content
    assert result.message.content == f"Found 1 matches\nslow.txt:\n  Line {lines + 1}: needle"
