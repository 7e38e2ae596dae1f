"""Listing helpers of the read-only file tools: what a directory shows, hidden entries left out.

``.aiignore``-hidden entries never appear; the noise directories (``.git``, ``node_modules``...)
appear in a tree as ``ignored`` without children; symlinks are listed but not followed.

A symlink whose target lies outside the working directory, is hidden by ``.aiignore`` or is missing
is shown as a bare link: ``[LINK] name``, ``"type": "link"``, no size, no type of its target, no
target. Otherwise a listing would tell the agent what it may not look at (a directory outside, the
size of a hidden file).

A listed directory is opened from the working directory without following links (``nofollow``),
so one swapped for a link to the outside after its check is refused rather than listed.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from gth_jupyter.tools.fs import nofollow
from gth_jupyter.tools.fs.aiignore import NOISE_DIRS, glob_to_regex
from gth_jupyter.tools.fs.workspace import Workspace

__all__ = ["Item", "info", "kind", "label", "search", "size", "sized", "tree", "visible"]


def size(n: float) -> str:
    units = ["B", "KB", "MB", "GB", "TB"]
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n, i = n / 1024, i + 1
    return f"{int(n)} {units[i]}" if i == 0 else f"{n:.2f} {units[i]}"


Kind = Literal["directory", "file", "link"]


@dataclass(frozen=True)
class Item:
    """One visible entry of a listing: what may be said about it."""

    name: str
    path: Path
    kind: Kind
    size: int  # a file's size, else 0
    walkable: bool  # a directory itself, not a link to one


def visible(ws: Workspace, directory: Path) -> list[Item]:
    """The entries of ``directory`` that ``.aiignore`` does not hide, by name. The directory is
    read through a descriptor reached without following links, so one swapped for a link after
    the check is refused, not listed."""
    fd = nofollow.open_directory(ws.root, directory)
    try:
        with os.scandir(fd) as entries:
            items = [_item(ws, directory, e) for e in entries if not ws.hides(directory / e.name)]
    finally:
        os.close(fd)
    return sorted(items, key=lambda item: item.name)


def _item(ws: Workspace, directory: Path, entry: os.DirEntry[str]) -> Item:
    path = directory / entry.name
    k = kind(ws, path, entry)
    size = entry.stat().st_size if k == "file" else 0
    return Item(entry.name, path, k, size, entry.is_dir(follow_symlinks=False))


def kind(ws: Workspace, path: Path, entry: os.DirEntry[str]) -> Kind:
    """What a listing may say ``entry`` is (see the module docstring for ``link``)."""
    if ws.link_hides_target(path):
        return "link"
    return "directory" if entry.is_dir() else "file"


def label(item: Item) -> str:
    return {"directory": "[DIR]", "file": "[FILE]", "link": "[LINK]"}[item.kind]


def tree(ws: Workspace, directory: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in visible(ws, directory):
        node: dict[str, Any] = {"name": item.name, "type": item.kind}
        if item.walkable and item.name in NOISE_DIRS:  # links are never followed, so no loops
            node["ignored"] = True
        elif item.walkable:
            node["children"] = tree(ws, item.path)
        out.append(node)
    return out


def search(ws: Workspace, root: Path, pattern: str, exclude: list[str]) -> list[str]:
    excluded = [re.compile(glob_to_regex(p if "*" in p else f"**/{p}/**")) for p in exclude]
    found: list[str] = []
    for current, dirs, files in os.walk(root):
        for name in sorted([*dirs, *files]):
            full = Path(current, name)
            rel = full.relative_to(root).as_posix()
            if ws.hides(full) or any(x.fullmatch(rel) for x in excluded):
                if name in dirs:
                    dirs.remove(name)
                continue
            if pattern.lower() in name.lower():
                found.append(ws.relative(full))
    return found


LINK_INFO = (
    "isSymbolicLink: true\ntarget: not shown (outside the working directory, hidden or missing)"
)


def info(ws: Workspace, requested: str) -> str:
    """``get_file_info``; a link whose target may not be described is shown as a bare link."""
    entry = ws.lexical(requested)
    if entry is not None and ws.link_hides_target(entry):
        return LINK_INFO
    st = nofollow.stat_entry(ws.root, ws.resolve(requested))

    def when(ts: float) -> str:
        return datetime.fromtimestamp(ts, timezone.utc).isoformat()

    created = getattr(st, "st_birthtime", st.st_ctime)
    fields = {
        "size": st.st_size,
        "created": when(created),
        "modified": when(st.st_mtime),
        "accessed": when(st.st_atime),
        "isDirectory": str(stat.S_ISDIR(st.st_mode)).lower(),
        "isFile": str(stat.S_ISREG(st.st_mode)).lower(),
        "permissions": oct(st.st_mode)[-3:],
    }
    return "\n".join(f"{k}: {v}" for k, v in fields.items())


def sized(ws: Workspace, directory: Path, sort_by: str) -> str:
    """``list_directory_with_sizes``: entries with sizes, then the totals (bare links count in
    neither)."""
    rows = visible(ws, directory)
    if sort_by == "size":
        rows.sort(key=lambda row: -row.size)
    lines = []
    for item in rows:
        shown = size(item.size).rjust(10) if item.kind == "file" else ""
        lines.append(f"{label(item)} {item.name.ljust(30)} {shown}")
    files = [item.size for item in rows if item.kind == "file"]
    dirs = [item for item in rows if item.kind == "directory"]
    lines += [
        "",
        f"Total: {len(files)} files, {len(dirs)} directories",
        f"Combined size: {size(sum(files)) if files else '0 B'}",
    ]
    return "\n".join(lines)
