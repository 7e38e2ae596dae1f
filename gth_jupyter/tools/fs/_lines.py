"""Reading text files line by line in bounded memory, for ``read_file`` and ``read_multiple_files``.

A read never holds more of a file than the caps let it show: each line is read up to a little
more than the 2,000 characters it may show (the rest of a long line is skipped in fixed-size
chunks, never kept), the 50 KB / 2,000-line cap stops the reading, a window's leading lines are
skipped by counting newlines in chunks, and ``tail`` finds its first line by scanning backwards
from the end. So ``head: 3`` of a 300 MB file reads a few kilobytes, and even a 300 MB line costs
one chunk of memory.

Two views of a file's lines, matching what the tools showed when they read whole files:

- *raw* (a read without a window): split on ``\\n`` only, carriage returns kept, and the empty
  string after a final newline counts as a line, so joining the lines gives the file back;
- *normalised* (windows, head and tail): ``\\r\\n`` ends a line like ``\\n``, and a final newline
  does not start another line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import BinaryIO

__all__ = [
    "MAX_BYTES",
    "MAX_LINE",
    "MAX_LINES",
    "count_lines",
    "join_capped",
    "lines",
    "skip",
    "tail_start",
]

MAX_LINES, MAX_BYTES, MAX_LINE = 2000, 50 * 1024, 2000
#: Bytes read of one line: enough for MAX_LINE + 1 characters of up to 4 bytes each, plus a split
#: character, so a line cut here is known to be longer than MAX_LINE.
_LINE_BUDGET = 4 * (MAX_LINE + 1) + 8
_CHUNK = 1 << 20


def _line(f: BinaryIO) -> tuple[bytes, bool] | None:
    """The next line's first bytes and whether a newline ended it; ``None`` at the end."""
    head = f.readline(_LINE_BUDGET)
    if not head:
        return None
    if head.endswith(b"\n"):
        return head[:-1], True
    if len(head) < _LINE_BUDGET:
        return head, False  # the last line, without a newline
    while True:  # a long line: skip the rest without keeping it
        rest = f.readline(_CHUNK)
        if not rest or rest.endswith(b"\n"):
            return head, bool(rest)


def lines(f: BinaryIO, *, normalised: bool) -> Iterator[str]:
    """The lines from ``f``'s position on, each cut to at most ``MAX_LINE + 1`` characters (one
    more than ``cap`` shows, so it can tell a long line); see the module docstring for the views."""
    ended = True  # the previous line ended with a newline (or nothing was read yet)
    while (item := _line(f)) is not None:
        data, ended = item
        if normalised and ended and data.endswith(b"\r"):
            data = data[:-1]
        yield data.decode("utf-8", "replace")[: MAX_LINE + 1]
    if ended and not normalised:
        yield ""


def skip(f: BinaryIO, count: int) -> int:
    """Move past ``count`` normalised lines; returns how many there were (fewer at the end)."""
    skipped, last = 0, b""
    while skipped < count:
        position = f.tell()
        chunk = f.read(_CHUNK)
        if not chunk:
            return skipped + (1 if last not in (b"", b"\n") else 0)  # a last line without \n
        found = chunk.count(b"\n")
        if skipped + found >= count:
            index = -1
            for _ in range(count - skipped):
                index = chunk.index(b"\n", index + 1)
            f.seek(position + index + 1)
            return count
        skipped, last = skipped + found, chunk[-1:]
    return skipped


def count_lines(f: BinaryIO) -> int:
    """How many normalised lines ``f`` holds (it is left at its end)."""
    f.seek(0)
    total, last = 0, b""
    while chunk := f.read(_CHUNK):
        total += chunk.count(b"\n")
        last = chunk[-1:]
    return total + (1 if last not in (b"", b"\n") else 0)


def tail_start(f: BinaryIO, count: int) -> int:
    """The offset of the first of the last ``count`` normalised lines, found from the end."""
    end = f.seek(0, os.SEEK_END)
    if end and (f.seek(end - 1), f.read(1))[1] == b"\n":
        end -= 1  # the final newline ends the last line; it does not start another
    found, position = 0, end
    while position > 0:
        start = max(0, position - _CHUNK)
        f.seek(start)
        chunk = f.read(position - start)
        index = len(chunk)
        while (index := chunk.rfind(b"\n", 0, index)) != -1:
            found += 1
            if found == count:
                return start + index + 1
        position = start
    return 0


def join_capped(items: Iterable[str], max_lines: float, start: int | None, hard: bool) -> str:
    """Join ``items``, cutting long lines and stopping at ``max_lines`` or 50 KB with a notice
    (only on a byte cut, or a line cut when ``hard``). It stops pulling lines as soon as it stops,
    so a lazy ``items`` is read no further than what is shown."""
    out: list[str] = []
    size, by_bytes, by_lines = 0, False, False
    for raw in items:
        if len(out) >= max_lines:
            by_lines = True
            break
        line = (
            raw if len(raw) <= MAX_LINE else f"{raw[:MAX_LINE]}... (line truncated to 2000 chars)"
        )
        grow = len(line.encode()) + (1 if out else 0)
        if out and size + grow > MAX_BYTES:
            by_bytes = True
            break
        out.append(line)
        size += grow
    result = "\n".join(out)
    if by_bytes or (by_lines and hard):
        how = "use offset/limit to page through the rest"
        if start is not None:
            how = f"resume with offset:{start + len(out)} (and an optional limit)"
        result += (
            f"\n... [read_file: output truncated at the 2000-line / 50 KB read cap — {how}] ..."
        )
    return result
