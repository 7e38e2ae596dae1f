"""The read-only file tools, with Gaunt Sloth's names, arguments and output shapes.

``read_file {path, offset?, limit?, head?, tail?}`` returns at most 2000 lines or 50 KB, lines cut
at 2000 characters, with a notice saying how to page on; ``read_multiple_files {paths}``;
``list_directory {path}`` and ``list_directory_with_sizes {path, sortBy?}`` (``[DIR]`` /
``[FILE]`` lines); ``directory_tree {path}`` (JSON); ``search_files {path, pattern,
excludePatterns?}`` (case-insensitive name match); ``get_file_info {path}``;
``list_allowed_directories``. Every path goes through the :class:`Workspace`, and entries hidden by
``.aiignore`` are left out of listings. A failure is an error result worded
``Error <action>: <reason>``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from gth_jupyter.tools import fs_listing
from gth_jupyter.tools._base import FileToolSpec, make_file_tools
from gth_jupyter.tools.workspace import PathDenied, Workspace, guarded

__all__ = ["READ_TOOLS", "make_read_tools"]

MAX_LINES, MAX_BYTES, MAX_LINE = 2000, 50 * 1024, 2000
READ_TOOLS = (
    "read_file",
    "read_multiple_files",
    "list_directory",
    "list_directory_with_sizes",
    "directory_tree",
    "search_files",
    "get_file_info",
    "list_allowed_directories",
)


class PathArgs(BaseModel):
    path: str


class ReadFileArgs(PathArgs):
    offset: int | None = Field(None, description="1-based first line of a window (with limit).")
    limit: int | None = Field(None, description=f"Lines from offset (at most {MAX_LINES}).")
    head: int | None = Field(None, description="Only the first N lines (may combine with tail).")
    tail: int | None = Field(None, description="Only the last N lines (may combine with head).")


class PathsArgs(BaseModel):
    paths: list[str]


class SizesArgs(PathArgs):
    sortBy: Literal["name", "size"] = Field("name", description="Sort by name or size")


class SearchArgs(PathArgs):
    pattern: str
    excludePatterns: list[str] = Field(default_factory=list)


class NoArgs(BaseModel):
    pass


def cap(text: str, max_lines: float, start: int | None, hard: bool) -> str:
    """Cut long lines, then stop at ``max_lines`` or 50 KB with a notice (see the docstring)."""
    lines = text.split("\n")
    if len(text.encode()) <= MAX_BYTES and len(lines) <= max_lines:
        if all(len(line) <= MAX_LINE for line in lines):
            return text
    out: list[str] = []
    size, by_bytes, by_lines = 0, False, False
    for raw in lines:
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


def _lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def read(path: Path, a: ReadFileArgs) -> str:
    if (a.offset is not None or a.limit is not None) and (a.head or a.tail):
        return (
            "read_file: pass a line window (offset/limit) OR head/tail, not both. Use offset/limit "
            "to read an arbitrary range; use head/tail for the first/last N lines."
        )
    text = path.read_text(encoding="utf-8", errors="replace")
    if a.offset is not None or a.limit is not None:
        start = max(1, a.offset or 1)
        lines = _lines(text)
        if start > len(lines) and lines:
            return f"[read_file: offset {start} is past end of file ({len(lines)} lines total)]"
        limit = min(max(1, a.limit or MAX_LINES), MAX_LINES)
        hard = a.limit is None or a.limit > MAX_LINES
        return cap("\n".join(lines[start - 1 :]), limit, start, hard)
    if a.head or a.tail:
        lines, head, tail = _lines(text), a.head or 0, a.tail or 0
        if head + tail >= len(lines):
            body = "\n".join(lines)
        elif head and tail:
            skipped = len(lines) - head - tail
            body = "\n".join([*lines[:head], f"... [{skipped} lines skipped] ...", *lines[-tail:]])
        else:
            body = "\n".join(lines[:head] if head else lines[-tail:])
        return cap(body, float("inf"), None, False)
    return cap(text, MAX_LINES, 1, True)


def make_read_tools(ws: Workspace, names: set[str]) -> list[BaseTool]:
    """The read tools in ``names``, bound to ``ws``."""

    async def read_file(path: str, offset: int | None = None, limit: int | None = None,
                        head: int | None = None, tail: int | None = None) -> str:  # fmt: skip
        args = ReadFileArgs(path=path, offset=offset, limit=limit, head=head, tail=tail)
        return await guarded(f"reading file {path}", lambda: read(ws.resolve(path), args))

    def read_one(p: str) -> str:
        try:
            text = ws.resolve(p).read_text("utf-8", "replace")
        except (PathDenied, OSError) as exc:
            return f"{p}: Error - {exc}"
        return f"{p}:\n{cap(text, MAX_LINES, 1, True)}\n"

    async def read_multiple_files(paths: list[str]) -> str:
        return "\n---\n".join([await asyncio.to_thread(read_one, p) for p in paths])

    def listing(path: str) -> str:
        items = fs_listing.visible(ws, ws.resolve(path))
        return "\n".join(f"{'[DIR]' if e.is_dir() else '[FILE]'} {e.name}" for e in items)

    async def list_directory(path: str) -> str:
        return await guarded(f"listing directory {path}", lambda: listing(path))

    async def list_directory_with_sizes(path: str, sortBy: str = "name") -> str:
        return await guarded(
            f"listing directory {path}", lambda: fs_listing.sized(ws, ws.resolve(path), sortBy)
        )

    async def directory_tree(path: str) -> str:
        return await guarded(
            f"building directory tree for {path}",
            lambda: json.dumps(fs_listing.tree(ws, ws.resolve(path)), indent=2),
        )

    async def search_files(
        path: str, pattern: str, excludePatterns: list[str] | None = None
    ) -> str:
        def run() -> str:
            found = fs_listing.search(ws, ws.resolve(path), pattern, excludePatterns or [])
            return "\n".join(found) if found else "No matches found"

        return await guarded(f"searching {path}", run)

    async def get_file_info(path: str) -> str:
        return await guarded(
            f"getting file info for {path}", lambda: fs_listing.info(ws.resolve(path))
        )

    async def list_allowed_directories() -> str:
        return f"Allowed directories:\n{ws.root}"

    specs: list[FileToolSpec] = [
        (
            "read_file",
            "Read a text file (capped at 2000 lines / 50 KB; page with offset/limit, or use "
            "head/tail).",
            ReadFileArgs,
            read_file,
        ),
        (
            "read_multiple_files",
            "Read several files at once; each is capped like read_file.",
            PathsArgs,
            read_multiple_files,
        ),
        ("list_directory", "List a directory: [DIR] and [FILE] entries.", PathArgs, list_directory),
        (
            "list_directory_with_sizes",
            "List a directory with file sizes and totals.",
            SizesArgs,
            list_directory_with_sizes,
        ),
        (
            "directory_tree",
            "A recursive JSON tree (name, type, children) of a directory.",
            PathArgs,
            directory_tree,
        ),
        (
            "search_files",
            "Find files and directories whose NAME contains a pattern (case-insensitive), "
            "recursively.",
            SearchArgs,
            search_files,
        ),
        (
            "get_file_info",
            "Size, times, type and permissions of a file or directory.",
            PathArgs,
            get_file_info,
        ),
        (
            "list_allowed_directories",
            "The directories the file tools may access.",
            NoArgs,
            list_allowed_directories,
        ),
    ]
    return make_file_tools(specs, names, "read")
