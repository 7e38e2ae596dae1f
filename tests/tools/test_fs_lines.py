"""Streamed reads give exactly what whole-file reads gave, for any text and any window.

``reference`` is the whole-file implementation ``read_file`` had before it streamed (kept here as
the oracle); hypothesis feeds both the same files: carriage returns, multi-byte and broken UTF-8,
empty lines, lines longer than the 2,000-character cut, and files past the 50 KB cap.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gth_jupyter.tools.fs._lines import MAX_BYTES, MAX_LINE, MAX_LINES, join_capped
from gth_jupyter.tools.fs._read import ReadFileArgs
from gth_jupyter.tools.fs._read import read as read_in
from gth_jupyter.tools.fs.workspace import Workspace


def read(path: Path, args: ReadFileArgs) -> str:
    ws = Workspace.at(path.parent)
    return read_in(ws, ws.root / path.name, args)


def _ref_cap(text: str, max_lines: float, start: int | None, hard: bool) -> str:
    lines = text.split("\n")
    if len(text.encode()) <= MAX_BYTES and len(lines) <= max_lines:
        if all(len(line) <= MAX_LINE for line in lines):
            return text
    return join_capped(lines, max_lines, start, hard)


def _ref_lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def reference(data: bytes, a: ReadFileArgs) -> str:
    text = data.decode("utf-8", "replace")
    if a.offset is not None or a.limit is not None:
        start = max(1, a.offset or 1)
        lines = _ref_lines(text)
        if start > len(lines) and lines:
            return f"[read_file: offset {start} is past end of file ({len(lines)} lines total)]"
        limit = min(max(1, a.limit or MAX_LINES), MAX_LINES)
        hard = a.limit is None or a.limit > MAX_LINES
        return _ref_cap("\n".join(lines[start - 1 :]), limit, start, hard)
    if a.head or a.tail:
        lines, head, tail = _ref_lines(text), a.head or 0, a.tail or 0
        if head + tail >= len(lines):
            body = "\n".join(lines)
        elif head and tail:
            skipped = len(lines) - head - tail
            body = "\n".join([*lines[:head], f"... [{skipped} lines skipped] ...", *lines[-tail:]])
        else:
            body = "\n".join(lines[:head] if head else lines[-tail:])
        return _ref_cap(body, float("inf"), None, False)
    return _ref_cap(text, MAX_LINES, 1, True)


piece = st.one_of(
    st.sampled_from(
        [b"\n", b"\r\n", b"\r", b"a", "\u00e9".encode(), "\U0001f600".encode(), b"\xff"]
    ),
    st.tuples(st.sampled_from([b"x", "\u00e9".encode(), b"\n", b"ab\n"]), st.integers(1, 3000)).map(
        lambda t: t[0] * t[1]
    ),
)
files = st.lists(piece, max_size=40).map(b"".join)
numbers = st.none() | st.integers(0, 2100)


forms = st.sampled_from(["whole", "window", "head", "tail", "head and tail"])


def _args(form: str, a: int | None, b: int | None) -> ReadFileArgs:
    if form == "window":
        return ReadFileArgs(path="f", offset=a, limit=b)
    if form == "head":
        return ReadFileArgs(path="f", head=a)
    if form == "tail":
        return ReadFileArgs(path="f", tail=a)
    if form == "head and tail":
        return ReadFileArgs(path="f", head=a, tail=b)
    return ReadFileArgs(path="f")


@settings(max_examples=300, deadline=None)
@given(data=files, form=forms, a=numbers, b=numbers)
def test_streamed_reads_match_whole_file_reads(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, form: str, a: int | None, b: int | None
) -> None:
    path = tmp_path_factory.mktemp("f") / "f.txt"
    path.write_bytes(data)
    args = _args(form, a, b)
    assert read(path, args) == reference(data, args)


def test_the_caps_still_apply_to_a_file_without_newlines(tmp_path: Path) -> None:
    path = tmp_path / "one.txt"
    path.write_bytes(b"z" * 3_000_000)
    expected = "z" * MAX_LINE + "... (line truncated to 2000 chars)"
    assert read(path, ReadFileArgs(path="f")) == expected
    assert read(path, ReadFileArgs(path="f", tail=1)) == expected
