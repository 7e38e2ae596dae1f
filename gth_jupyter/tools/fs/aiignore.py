"""``.aiignore``: the files the agent may not read at all, whatever else lets it.

One pattern per line, ``#`` for comments; ``aiignore.patterns`` in the config replaces the file
and ``aiignore.enabled: false`` turns the filter off. Matching follows Gaunt Sloth 2 (gitignore-
like, on the path relative to the working directory):

- a pattern without ``/`` applies at every depth (``*.key`` hides ``a/b/c.key``);
- a pattern with ``/`` (or a leading ``/``) is anchored at the working directory;
- whatever a pattern hides, it hides the subtree beneath it;
- a trailing ``/`` is ignored (``dist/`` also hides a *file* named ``dist``) and ``!`` does not
  re-include: both err toward hiding.

Globs: ``*`` and ``?`` stay inside one path segment, ``**`` spans segments, ``[...]`` and
``{a,b}`` as usual. Unlike Node's ``path.matchesGlob``, wildcards also match names starting with
a dot, so ``*.env`` hides ``.env``-like files too (again: the direction that hides more).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["AIIGNORE_FILE", "NOISE_DIRS", "AiIgnore", "glob_to_regex"]

AIIGNORE_FILE = ".aiignore"
#: Noise directories, ``.aiignore`` or not: ``directory_tree`` marks them ignored and does not
#: descend, ``gth_grep`` (either engine) skips them. Here, beside what the tools may not see, so
#: that the grep worker (standard library only) reads them too.
NOISE_DIRS = frozenset({".git", "node_modules", "dist", ".idea"})


def glob_to_regex(glob: str) -> str:
    """The regex (for ``fullmatch``) of a ``/``-separated glob; see the module docstring."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole_segment = (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/")
            if j - i >= 2 and whole_segment:
                if j < n:  # "**/": any number of leading directories, including none
                    out.append("(?:.*/)?")
                    j += 1
                else:
                    out.append(".*")
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        elif c == "{" and (end := glob.find("}", i)) != -1:
            options = glob[i + 1 : end].split(",")
            out.append("(?:" + "|".join(glob_to_regex(o) for o in options) + ")")
            i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _expand(line: str) -> list[str]:
    body = line.rstrip("/")
    anchored = body.startswith("/")
    body = body.lstrip("/")
    if not body:
        return []  # a line of slashes hides nothing (it must not become "**")
    base = body if anchored or "/" in body else f"**/{body}"
    return [base, f"{base}/**"]


class AiIgnore:
    """A compiled ``.aiignore``; :meth:`hides` takes a path relative to the working directory."""

    def __init__(self, patterns: Iterable[str], *, ignore_case: bool = False) -> None:
        self.patterns = [p.strip() for p in patterns if p.strip() and not p.strip().startswith("#")]
        globs = [g for p in self.patterns for g in _expand(p)]
        flags = re.S | (re.I if ignore_case else 0)
        self._regex = re.compile("|".join(f"(?:{glob_to_regex(g)})" for g in globs), flags)
        self._empty = not globs

    @classmethod
    def load(
        cls,
        root: Path,
        patterns: Iterable[str] | None = None,
        *,
        enabled: bool = True,
        ignore_case: bool = False,
    ) -> AiIgnore:
        """The filter for ``root``: config ``patterns`` if given, else ``root/.aiignore``.
        ``ignore_case`` for a case-insensitive disk, where ``SECRETS/`` *is* ``secrets/``."""
        if not enabled:
            return cls([])
        if patterns is not None:
            return cls(patterns, ignore_case=ignore_case)
        try:
            text = (root / AIIGNORE_FILE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return cls([])
        return cls(text.splitlines(), ignore_case=ignore_case)

    @property
    def empty(self) -> bool:
        """True if the filter hides nothing."""
        return self._empty

    def hides(self, relative: str) -> bool:
        """True if the ``/``-separated relative path (or a directory above it) is hidden."""
        if self._empty or relative in ("", "."):
            return False
        return self._regex.fullmatch(relative) is not None
