"""The read-only file tools, with Gaunt Sloth's names, arguments and output shapes.

``read_file {path, offset?, limit?, head?, tail?}`` returns at most 2000 lines or 50 KB, lines cut
at 2000 characters, with a notice saying how to page on; ``read_multiple_files {paths}``;
``list_directory {path}`` and ``list_directory_with_sizes {path, sortBy?}`` (``[DIR]`` /
``[FILE]`` lines); ``directory_tree {path}`` (JSON); ``search_files {path, pattern,
excludePatterns?}`` (case-insensitive name match); ``get_file_info {path}``;
``list_allowed_directories``. Reads stream (``_lines``): nothing past what the caps show is
kept in memory, and a capped read stops reading where its output stops. Every path goes through
the :class:`Workspace` and is opened without following a symlink swapped in after that check
(:meth:`Workspace.open`), and entries hidden by ``.aiignore`` are left out of listings. A failure is
an error result worded ``Error <action>: <reason>``.
"""

from __future__ import annotations

import asyncio
import json
from itertools import chain, islice
from pathlib import Path
from typing import BinaryIO, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from gth_jupyter.tools._base import FileToolSpec, make_file_tools
from gth_jupyter.tools.fs import _lines, _listing
from gth_jupyter.tools.fs._lines import MAX_LINES, join_capped
from gth_jupyter.tools.fs.workspace import PathDenied, Workspace, guarded

__all__ = ["READ_TOOLS", "make_read_tools"]

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
    head: int | None = Field(
        None, ge=0, description="Only the first N lines (may combine with tail)."
    )
    tail: int | None = Field(
        None, ge=0, description="Only the last N lines (may combine with head)."
    )


class PathsArgs(BaseModel):
    paths: list[str]


class SizesArgs(PathArgs):
    sortBy: Literal["name", "size"] = Field("name", description="Sort by name or size")


class SearchArgs(PathArgs):
    pattern: str
    excludePatterns: list[str] = Field(default_factory=list)


class NoArgs(BaseModel):
    pass


_TOGETHER = (
    "read_file: pass a line window (offset/limit) OR head/tail, not both. Use offset/limit "
    "to read an arbitrary range; use head/tail for the first/last N lines."
)


def read_capped(ws: Workspace, path: Path) -> str:
    """A read without a window: the file up to the caps, and not a byte further."""
    with ws.open(path) as f:
        return join_capped(_lines.lines(f, normalised=False), MAX_LINES, 1, True)


def _window(f: BinaryIO, offset: int | None, limit: int | None) -> str:
    start = max(1, offset or 1)
    skipped = _lines.skip(f, start - 1)
    rest = _lines.lines(f, normalised=True)
    first = next(rest, None)
    if first is None and skipped:
        return f"[read_file: offset {start} is past end of file ({skipped} lines total)]"
    shown = min(max(1, limit or MAX_LINES), MAX_LINES)
    hard = limit is None or limit > MAX_LINES
    return join_capped(chain([] if first is None else [first], rest), shown, start, hard)


def _ends(ws: Workspace, path: Path, head: int, tail: int) -> str:
    # Two handles: the head is read lazily while the tail is found from the end.
    with ws.open(path) as f, ws.open(path) as g:
        if head and tail:
            total = _lines.count_lines(f)
            f.seek(0)
            if head + tail >= total:
                return join_capped(_lines.lines(f, normalised=True), float("inf"), None, False)
            g.seek(_lines.tail_start(g, tail))
            skipped = f"... [{total - head - tail} lines skipped] ..."
            first = islice(_lines.lines(f, normalised=True), head)
            body = chain(first, [skipped], _lines.lines(g, normalised=True))
            return join_capped(body, float("inf"), None, False)
        if tail:
            g.seek(_lines.tail_start(g, tail))
            return join_capped(_lines.lines(g, normalised=True), float("inf"), None, False)
        return join_capped(
            islice(_lines.lines(f, normalised=True), head), float("inf"), None, False
        )


def read(ws: Workspace, path: Path, a: ReadFileArgs) -> str:
    """``read_file``: every form streams, so memory stays bounded whatever the file's size."""
    if (a.offset is not None or a.limit is not None) and (a.head or a.tail):
        return _TOGETHER
    if a.offset is None and a.limit is None and not a.head and not a.tail:
        return read_capped(ws, path)
    if a.offset is not None or a.limit is not None:
        with ws.open(path) as f:
            return _window(f, a.offset, a.limit)
    return _ends(ws, path, a.head or 0, a.tail or 0)


def make_read_tools(ws: Workspace, names: set[str]) -> list[BaseTool]:
    """The read tools in ``names``, bound to ``ws``."""

    async def read_file(path: str, offset: int | None = None, limit: int | None = None,
                        head: int | None = None, tail: int | None = None) -> str:  # fmt: skip
        args = ReadFileArgs(path=path, offset=offset, limit=limit, head=head, tail=tail)
        return await guarded(f"reading file {path}", lambda: read(ws, ws.resolve(path), args))

    def read_one(p: str) -> str:
        try:
            text = read_capped(ws, ws.resolve(p))
        except (PathDenied, OSError) as exc:
            return f"{p}: Error - {exc}"
        return f"{p}:\n{text}\n"

    async def read_multiple_files(paths: list[str]) -> str:
        return "\n---\n".join([await asyncio.to_thread(read_one, p) for p in paths])

    def listing(path: str) -> str:
        items = _listing.visible(ws, ws.resolve(path))
        return "\n".join(f"{_listing.label(item)} {item.name}" for item in items)

    async def list_directory(path: str) -> str:
        return await guarded(f"listing directory {path}", lambda: listing(path))

    async def list_directory_with_sizes(path: str, sortBy: str = "name") -> str:
        return await guarded(
            f"listing directory {path}", lambda: _listing.sized(ws, ws.resolve(path), sortBy)
        )

    async def directory_tree(path: str) -> str:
        return await guarded(
            f"building directory tree for {path}",
            lambda: json.dumps(_listing.tree(ws, ws.resolve(path)), indent=2),
        )

    async def search_files(
        path: str, pattern: str, excludePatterns: list[str] | None = None
    ) -> str:
        def run() -> str:
            found = _listing.search(ws, ws.resolve(path), pattern, excludePatterns or [])
            return "\n".join(found) if found else "No matches found"

        return await guarded(f"searching {path}", run)

    async def get_file_info(path: str) -> str:
        return await guarded(f"getting file info for {path}", lambda: _listing.info(ws, path))

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
