"""The in-process engine of ``gth_grep``, for machines without ripgrep.

It reproduces what ``rg --no-require-git`` searches, so both engines give the same output:

- ``gitignore`` file set: hidden (dot) entries are skipped, and ``.gitignore``, ``.ignore`` and
  ``.rgignore`` files apply with gitignore rules (a deeper file overrides a shallower one, ``!``
  re-includes, an ignored directory is not entered). Ignore files in the directories above the
  working directory apply too, up to the repository root, as does ``.git/info/exclude``.
- ``all``: everything is searched.
- Either way the noise directories (``.git``, ``node_modules``, ``dist``, ``.idea``) are skipped,
  symlinks found while walking are not followed, and files holding a NUL byte (binary) are skipped.

The caller filters ``.aiignore`` and caps the count; files are returned in path order so a capped
scan returns the same first matches as a sorted, capped ripgrep result.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from gth_jupyter.tools.aiignore import glob_to_regex

__all__ = ["NOISE_DIRS", "Match", "include_matcher", "scan"]

NOISE_DIRS = frozenset({".git", "node_modules", "dist", ".idea"})
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
    """Matches under ``target`` in path order, at most ``limit``; ``hidden(rel)`` is .aiignore."""
    if target.is_file():
        files = [target]
    else:
        ignores = _Ignores(root) if file_set != "all" else None
        files = list(_walk(target, file_set, ignores))
    ranked = sorted((p.relative_to(root).as_posix(), p) for p in files)
    matches: list[Match] = []
    for rel, path in ranked:
        if include is not None and target != path and not include.fullmatch(rel):
            continue
        if hidden(rel):
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data:
            continue
        text = data.decode("utf-8", "replace")
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()  # the terminator ends the last line; it does not start another
        for number, line in enumerate(lines, start=1):
            if regex.search(line):
                matches.append(Match(rel, number, line))
                if len(matches) >= limit:
                    return matches
    return matches
