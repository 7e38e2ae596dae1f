"""The working directory the file tools are confined to, and the ``.aiignore`` inside it.

Every path a tool receives is resolved here. It must stay inside the working directory both as
written and after following symlinks (a link inside the tree pointing outside it is refused), and
it must not be hidden by ``.aiignore``. A path that does not exist yet (a file to write) is checked
through its nearest existing parent, which ``os.path.realpath`` resolves. The tools then open the
*resolved* path without following any symlink (:meth:`Workspace.open`, :mod:`nofollow`), so a
directory swapped for a link between the check and the open is refused, not followed.

Two more questions the tools ask it: whether a directory *contains* a hidden path (then it may not
be moved or deleted as a whole, which would carry the hidden path along), and whether a symlink's
target may be described at all (not when it lies outside, is hidden, or is missing).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from langchain_core.tools import ToolException

from gth_jupyter.tools.fs import nofollow
from gth_jupyter.tools.fs.aiignore import AiIgnore
from gth_jupyter.tools.fs.nofollow import PathDenied

__all__ = ["PathDenied", "Workspace", "case_insensitive"]


def case_insensitive(directory: Path) -> bool:
    """True if the disk holding ``directory`` ignores letter case (macOS, Windows by default):
    there ``.aiignore`` must match ``SECRETS/key`` against ``secrets/``, or the case bypasses it."""
    text = str(directory)
    swapped = text.swapcase()
    if swapped == text:
        return False
    try:
        return os.path.samefile(text, swapped)
    except OSError:
        return False


@dataclass(frozen=True)
class Workspace:
    """``root``: the working directory (symlinks resolved); ``aiignore``: its filter."""

    root: Path
    aiignore: AiIgnore = field(default_factory=lambda: AiIgnore([]))

    @classmethod
    def at(
        cls, cwd: Path, patterns: list[str] | None = None, *, aiignore_enabled: bool = True
    ) -> Workspace:
        root = Path(os.path.realpath(cwd))
        folded = case_insensitive(root)
        aiignore = AiIgnore.load(root, patterns, enabled=aiignore_enabled, ignore_case=folded)
        return cls(root, aiignore)

    def inside(self, path: Path) -> bool:
        """True if ``path`` (already absolute and normalised) is the root or below it."""
        return path == self.root or self.root in path.parents

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, ``/``-separated (``.`` for the root itself)."""
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    def hides(self, path: Path) -> bool:
        """True if ``.aiignore`` hides ``path`` (an absolute path inside the root)."""
        return self.aiignore.hides(self.relative(path))

    def resolve(self, requested: str, *, check_aiignore: bool = True) -> Path:
        """The real absolute path for ``requested``, or :class:`PathDenied` saying why not."""
        text = requested.strip()
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
            text = text[1:-1]
        if not text:
            raise PathDenied("Path cannot be empty")
        if "\0" in text:
            raise PathDenied("Path contains a null byte")
        candidate = Path(os.path.expanduser(text))
        absolute = Path(os.path.normpath(self.root / candidate))
        real = Path(os.path.realpath(absolute))
        if not self.inside(real):
            if self.inside(absolute):
                raise PathDenied("Access denied - symlink target outside allowed directories")
            raise PathDenied(
                f"Access denied - path outside allowed directories: {absolute} not in {self.root}"
            )
        if check_aiignore and self.hides(real):
            raise PathDenied(f"Access denied - {requested} is hidden by .aiignore")
        return real

    def open(self, path: Path, mode: str = "rb", *, create_dirs: bool = False) -> BinaryIO:
        """``path`` (from :meth:`resolve`) opened without following a symlink that appeared
        since the check (see :mod:`~gth_jupyter.tools.fs.nofollow`)."""
        return nofollow.open_file(self.root, path, mode, create_dirs=create_dirs)

    def hides_within(self, directory: Path) -> bool:
        """True if ``.aiignore`` hides anything at or below ``directory`` (links not followed).

        A move or a recursive delete of such a directory would carry the hidden paths with it
        (``conf/prod.env`` hidden, ``conf`` moved to ``conf2``, then ``conf2/prod.env`` read)."""
        if self.hides(directory):
            return True
        if self.aiignore.empty:
            return False

        def unreadable(error: OSError) -> None:
            raise error  # what cannot be listed cannot be vouched for

        for current, dirs, files in os.walk(directory, onerror=unreadable):
            for name in (*dirs, *files):
                if self.hides(Path(current, name)):
                    return True
        return False

    def link_hides_target(self, path: Path) -> bool:
        """True if ``path`` is a symlink whose target a listing must not describe: outside the
        working directory, hidden by ``.aiignore``, or missing."""
        if not path.is_symlink():
            return False
        target = Path(os.path.realpath(path))
        return not self.inside(target) or self.hides(target) or not target.exists()

    def lexical(self, requested: str) -> Path | None:
        """The path ``requested`` names, its directories resolved but its last part not followed;
        ``None`` when that is not a visible entry inside the working directory."""
        text = requested.strip()
        if not text or "\0" in text:
            return None
        absolute = Path(os.path.normpath(self.root / os.path.expanduser(text)))
        if absolute == self.root:
            return None
        entry = Path(os.path.realpath(absolute.parent)) / absolute.name
        if not self.inside(entry) or entry == self.root or self.hides(entry):
            return None
        return entry


async def guarded(action: str, run: Callable[[], str]) -> str:
    """Runs ``run`` off the event loop; a refusal or an OS error becomes ``Error <action>: ...``,
    the wording Gaunt Sloth's file tools use."""
    try:
        return await asyncio.to_thread(run)
    except (PathDenied, OSError, ValueError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ToolException(f"Error {action}: {detail}") from None
