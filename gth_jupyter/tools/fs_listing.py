"""Listing helpers of the read-only file tools: what a directory shows, hidden entries left out.

``.aiignore``-hidden entries never appear; the noise directories (``.git``, ``node_modules``...)
appear in a tree as ``ignored`` without children; symlinks are listed but not followed.

A symlink whose target lies outside the working directory, is hidden by ``.aiignore`` or is missing
is shown as a bare link: ``[LINK] name``, ``"type": "link"``, no size, no type of its target, no
target. Otherwise a listing would tell the agent what it may not look at (a directory outside, the
size of a hidden file).
"""

from __future__ import annotations

import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from gth_jupyter.tools.aiignore import glob_to_regex
from gth_jupyter.tools.grep_scan import NOISE_DIRS
from gth_jupyter.tools.workspace import Workspace

__all__ = ["info", "kind", "label", "search", "size", "sized", "tree", "visible"]


def size(n: float) -> str:
    units = ["B", "KB", "MB", "GB", "TB"]
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n, i = n / 1024, i + 1
    return f"{int(n)} {units[i]}" if i == 0 else f"{n:.2f} {units[i]}"


def visible(ws: Workspace, directory: Path) -> list[os.DirEntry[str]]:
    entries = [e for e in os.scandir(directory) if not ws.hides(Path(e.path))]
    return sorted(entries, key=lambda e: e.name)


Kind = Literal["directory", "file", "link"]


def kind(ws: Workspace, entry: os.DirEntry[str]) -> Kind:
    """What a listing may say ``entry`` is (see the module docstring for ``link``)."""
    if ws.link_hides_target(Path(entry.path)):
        return "link"
    return "directory" if entry.is_dir() else "file"


def label(ws: Workspace, entry: os.DirEntry[str]) -> str:
    return {"directory": "[DIR]", "file": "[FILE]", "link": "[LINK]"}[kind(ws, entry)]


def tree(ws: Workspace, directory: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in visible(ws, directory):
        node: dict[str, Any] = {"name": e.name, "type": kind(ws, e)}
        is_dir = e.is_dir(follow_symlinks=False)  # links are never followed, so no loops
        if is_dir and e.name in NOISE_DIRS:
            node["ignored"] = True
        elif is_dir:
            node["children"] = tree(ws, Path(e.path))
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
    path = ws.resolve(requested)
    st = path.stat()

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
    rows = []
    for e in visible(ws, directory):
        k = kind(ws, e)
        rows.append((e, k, e.stat().st_size if k == "file" else 0))
    if sort_by == "size":
        rows.sort(key=lambda row: -row[2])
    lines = []
    for entry, k, n in rows:
        shown = size(n).rjust(10) if k == "file" else ""
        lines.append(f"{label(ws, entry)} {entry.name.ljust(30)} {shown}")
    files = [n for _, k, n in rows if k == "file"]
    dirs = [n for _, k, n in rows if k == "directory"]
    lines += [
        "",
        f"Total: {len(files)} files, {len(dirs)} directories",
        f"Combined size: {size(sum(files)) if files else '0 B'}",
    ]
    return "\n".join(lines)
