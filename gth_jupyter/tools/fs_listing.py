"""Listing helpers of the read-only file tools: what a directory shows, hidden entries left out.

``.aiignore``-hidden entries never appear; the noise directories (``.git``, ``node_modules``...)
appear in a tree as ``ignored`` without children; symlinks are listed but not followed.
"""

from __future__ import annotations

import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gth_jupyter.tools.aiignore import glob_to_regex
from gth_jupyter.tools.grep_scan import NOISE_DIRS
from gth_jupyter.tools.workspace import Workspace

__all__ = ["info", "search", "size", "sized", "tree", "visible"]


def size(n: float) -> str:
    units = ["B", "KB", "MB", "GB", "TB"]
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n, i = n / 1024, i + 1
    return f"{int(n)} {units[i]}" if i == 0 else f"{n:.2f} {units[i]}"


def visible(ws: Workspace, directory: Path) -> list[os.DirEntry[str]]:
    entries = [e for e in os.scandir(directory) if not ws.hides(Path(e.path))]
    return sorted(entries, key=lambda e: e.name)


def tree(ws: Workspace, directory: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in visible(ws, directory):
        is_dir = e.is_dir(follow_symlinks=False)
        node: dict[str, Any] = {"name": e.name, "type": "directory" if is_dir else "file"}
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


def info(path: Path) -> str:
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
    """``list_directory_with_sizes``: entries with sizes, then the totals."""
    rows = [(e, 0 if e.is_dir() else e.stat().st_size) for e in visible(ws, directory)]
    if sort_by == "size":
        rows.sort(key=lambda row: -row[1])
    lines = []
    for entry, n in rows:
        shown = "" if entry.is_dir() else size(n).rjust(10)
        lines.append(f"{'[DIR]' if entry.is_dir() else '[FILE]'} {entry.name.ljust(30)} {shown}")
    files = [n for entry, n in rows if not entry.is_dir()]
    lines += [
        "",
        f"Total: {len(files)} files, {len(rows) - len(files)} directories",
        f"Combined size: {size(sum(files)) if files else '0 B'}",
    ]
    return "\n".join(lines)
