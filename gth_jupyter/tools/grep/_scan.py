"""The in-process engine of ``gth_grep``, for machines without ripgrep.

It reproduces what ``rg --no-require-git`` searches, so both engines give the same output:

- ``gitignore`` file set: hidden (dot) entries are skipped, and ``.gitignore``, ``.ignore`` and
  ``.rgignore`` files apply with gitignore rules (a deeper file overrides a shallower one, ``!``
  re-includes, an ignored directory is not entered). Ignore files in the directories above the
  working directory apply too, up to the repository root, as does ``.git/info/exclude``.
- ``all``: everything is searched.
- Either way the noise directories (``.git``, ``node_modules``, ``dist``, ``.idea``) are skipped,
  symlinks found while walking are not followed, and files holding a NUL byte (binary) are skipped.
- Files are read line by line and each line is matched on its first 4,096 characters (as Gaunt
  Sloth's scanner does), so a huge file or a huge line costs a chunk of memory, not its size.

``.aiignore`` is applied before a file is opened, and files are searched in path order so a capped
scan returns the same first matches as a sorted, capped ripgrep result. Only the standard library,
``pathspec`` and two standard-library-only modules of the tools are imported: ``_worker``
(the process that runs the matching under a deadline) imports this module without the tools.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pathspec

from gth_jupyter.tools.fs import nofollow
from gth_jupyter.tools.fs.aiignore import NOISE_DIRS, glob_to_regex

__all__ = ["Match", "candidates", "include_matcher", "scan", "search"]

#: Characters of a line the scanner matches against (Gaunt Sloth's fallback reads 4096).
MAX_SCAN_LINE = 4096
_LINE_BUDGET = 4 * MAX_SCAN_LINE + 8
_CHUNK = 1 << 20
_IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")


@dataclass(frozen=True, order=True)
class Match:
    """One matching line: ``path`` relative to the working directory, ``line`` 1-based."""

    path: str
    line: int
    text: str


def include_matcher(include: str | None) -> re.Pattern[str] | None:
    """The ``include`` glob as ripgrep reads it: without ``/`` it matches the file name."""
    if not include:
        return None
    glob = include if "/" in include else f"**/{include}"
    return re.compile(glob_to_regex(glob.lstrip("/")), re.S)


class _Ignores:
    """The gitignore-style specs that apply below ``root``, loaded as directories are entered."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.specs: dict[Path, list[pathspec.GitIgnoreSpec]] = {}
        for directory in self._ancestors(root):
            self._load(directory)

    @staticmethod
    def _ancestors(root: Path) -> list[Path]:
        chain = [root]
        if not (root / ".git").exists():
            for parent in root.parents:
                chain.append(parent)
                if (parent / ".git").exists():
                    break
            else:
                chain = [root]  # not in a repository: only the tree's own ignore files
        return list(reversed(chain))

    def _load(self, directory: Path) -> None:
        specs: list[pathspec.GitIgnoreSpec] = []
        names = [*_IGNORE_FILES]
        if (directory / ".git" / "info" / "exclude").is_file():
            names.insert(0, ".git/info/exclude")
        for name in names:
            try:
                lines = (directory / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            specs.append(pathspec.GitIgnoreSpec.from_lines(lines.splitlines()))
        if specs:
            self.specs[directory] = specs

    def enter(self, directory: Path) -> None:
        if directory not in self.specs:
            self._load(directory)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        verdict: bool | None = None
        for directory in reversed(path.parents):  # shallow to deep: deeper files win
            specs = self.specs.get(directory)
            if not specs:
                continue
            rel = path.relative_to(directory).as_posix() + ("/" if is_dir else "")
            for spec in specs:
                result = spec.check_file(rel)
                if result.include is not None:
                    verdict = result.include
        return bool(verdict)


def _walk(start: Path, file_set: str, ignores: _Ignores | None) -> Iterator[Path]:
    try:
        entries = list(os.scandir(start))
    except OSError:
        return
    if ignores is not None:
        ignores.enter(start)
    for entry in entries:
        if entry.is_symlink():
            continue
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in NOISE_DIRS:
            continue
        if file_set != "all" and entry.name.startswith("."):
            continue
        if ignores is not None and ignores.ignored(path, is_dir):
            continue
        if is_dir:
            yield from _walk(path, file_set, ignores)
        elif entry.is_file(follow_symlinks=False):
            yield path


class _Binary(Exception):
    """The file holds a NUL byte: skipped, as ripgrep skips binary files."""


def _lines(f: BinaryIO) -> Iterator[bytes]:
    """Each line's first bytes (enough for ``MAX_SCAN_LINE`` characters); raises ``_Binary`` at a
    NUL byte, also in the part of a long line that is skipped without being kept."""
    while head := f.readline(_LINE_BUDGET):
        if b"\0" in head:
            raise _Binary
        if head.endswith(b"\n") or len(head) < _LINE_BUDGET:
            yield head.removesuffix(b"\n")
            continue
        while rest := f.readline(_CHUNK):
            if b"\0" in rest:
                raise _Binary
            if rest.endswith(b"\n"):
                break
        yield head


def _search_file(
    root: Path, rel: str, regex: re.Pattern[str], room: int, tick: Callable[[], None]
) -> list[Match]:
    """At most ``room`` matches in one file, read line by line (the file is read to its end, so
    a NUL byte anywhere still marks it binary, but never held whole). It is opened from the
    root without following links: one swapped in since the walk is skipped, not followed."""
    found: list[Match] = []
    try:
        with nofollow.open_file(root, root / rel) as f:
            for number, data in enumerate(_lines(f), start=1):
                tick()
                if len(found) < room:
                    line = data.decode("utf-8", "replace")[:MAX_SCAN_LINE]
                    if regex.search(line):
                        found.append(Match(rel, number, line))
    except _Binary:
        return []
    return found


def candidates(
    root: Path,
    target: Path,
    *,
    file_set: str,
    include: re.Pattern[str] | None,
    hidden: Callable[[str], bool],
) -> list[str]:
    """The files a search of ``target`` reads, relative to ``root``, in path order;
    ``hidden(rel)`` is .aiignore (a hidden file is never opened)."""
    if target.is_file():
        files = [target]
    else:
        ignores = _Ignores(root) if file_set != "all" else None
        files = list(_walk(target, file_set, ignores))
    ranked = sorted((p.relative_to(root).as_posix(), p) for p in files)
    return [
        rel
        for rel, path in ranked
        if (include is None or target == path or include.fullmatch(rel)) and not hidden(rel)
    ]


def search(
    root: Path,
    files: list[str],
    regex: re.Pattern[str],
    limit: int,
    *,
    starting: Callable[[str], None] = lambda rel: None,
    tick: Callable[[], None] = lambda: None,
) -> Iterator[Match]:
    """The matches in ``files`` (from :func:`candidates`), at most ``limit``; ``starting(rel)``
    is called as each file is opened and ``tick()`` at each line (the worker's heartbeat)."""
    count = 0
    for rel in files:
        starting(rel)
        try:
            found = _search_file(root, rel, regex, limit - count, tick)
        except (OSError, nofollow.PathDenied):
            continue
        yield from found
        count += len(found)
        if count >= limit:
            return


def scan(
    root: Path,
    target: Path,
    regex: re.Pattern[str],
    *,
    file_set: str,
    include: re.Pattern[str] | None,
    limit: int,
    hidden: Callable[[str], bool],
) -> list[Match]:
    """:func:`candidates` then :func:`search`, in this process and without a deadline (the tool
    runs the search part in ``_worker``, which can be stopped)."""
    files = candidates(root, target, file_set=file_set, include=include, hidden=hidden)
    return list(search(root, files, regex, limit))
