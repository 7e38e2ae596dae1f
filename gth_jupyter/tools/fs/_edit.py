"""``edit_file``'s work: exact (or whitespace-tolerant) replacements, a diff, an atomic write.

An edit needs the whole text (a search string may span lines, a count must see every occurrence,
the diff compares both versions), so the file is held in memory, and only up to
:data:`EDIT_MAX_BYTES`: the size is read from the open file first, a bigger file is refused with
an error saying so, and the read stops one byte past the limit (a file that grew since is refused
too). Nothing larger than the limit is ever read.

The file is opened without following a symlink swapped in after its check, and the new text goes
to a temporary file beside it that is then renamed over it (``nofollow.replace_file``): the rename
never writes through a link, and a failed write leaves the file as it was. The file keeps its
permission bits.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path

from pydantic import BaseModel, Field

from gth_jupyter.tools.fs import nofollow
from gth_jupyter.tools.fs.workspace import Workspace

__all__ = ["EDIT_MAX_BYTES", "Edit", "apply_edits"]

#: The largest file ``edit_file`` changes (4 MiB); larger ones are refused, not read.
EDIT_MAX_BYTES = 4 * 1024 * 1024


class Edit(BaseModel):
    oldText: str = Field(description="Text to search for - must match exactly")
    newText: str = Field(description="Text to replace with")
    replaceAll: bool = Field(False, description="Replace every occurrence of oldText.")


def _too_big(size: int) -> ValueError:
    return ValueError(
        f"the file is {size} bytes, over edit_file's limit of {EDIT_MAX_BYTES} bytes (4 MB), so "
        "it was NOT read or modified. Change a file this large with write_file or a command."
    )


def read_for_edit(ws: Workspace, path: Path) -> tuple[str, int]:
    """The text of ``path`` with newlines made ``\\n`` (as a text-mode read gives it), and its
    permission bits; :class:`ValueError` for a file over :data:`EDIT_MAX_BYTES`."""
    with ws.open(path) as f:
        st = os.fstat(f.fileno())
        if st.st_size > EDIT_MAX_BYTES:
            raise _too_big(st.st_size)
        data = f.read(EDIT_MAX_BYTES + 1)
    if len(data) > EDIT_MAX_BYTES:  # it grew since the fstat
        raise _too_big(len(data))
    text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    return text, stat.S_IMODE(st.st_mode)


def _fuzzy(content: str, old: str, new: str) -> str | None:
    """Replace the first run of lines equal to ``old`` up to surrounding whitespace."""
    lines, old_lines = content.split("\n"), old.split("\n")
    for i in range(len(lines) - len(old_lines) + 1):
        if all(a.strip() == b.strip() for a, b in zip(lines[i:], old_lines, strict=False)):
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            new_lines = [
                indent + line.lstrip() if j == 0 else line for j, line in enumerate(new.split("\n"))
            ]
            lines[i : i + len(old_lines)] = new_lines
            return "\n".join(lines)
    return None


def _edited(original: str, edits: list[Edit]) -> tuple[str, list[str]]:
    content, notes = original, []
    for index, edit in enumerate(edits, start=1):
        old, new = edit.oldText.replace("\r\n", "\n"), edit.newText.replace("\r\n", "\n")
        count = content.count(old) if old else 0
        if count > 1 and not edit.replaceAll:
            raise ValueError(
                f"found {count} occurrences of the search text, so the edit is ambiguous and the "
                "file was NOT modified. Add more surrounding context to make the match unique, "
                f"or set replaceAll: true to replace every occurrence.\n{edit.oldText}"
            )
        if count:
            content = content.replace(old, new)
            notes.append(f"edit {index}: replaced {count} occurrence(s)")
            continue
        fuzzy = _fuzzy(content, old, new) if old else None
        if fuzzy is None:
            raise ValueError(
                "no occurrence of the search text was found, so the file was NOT modified. "
                "Re-read the file to get its exact current text (whitespace and indentation must "
                "match), then retry the edit, or use write_file to replace the whole file.\n"
                + edit.oldText
            )
        content = fuzzy
        notes.append(f"edit {index}: applied via fuzzy line-match (no exact match)")
    return content, notes


def apply_edits(ws: Workspace, path: Path, edits: list[Edit], dry_run: bool, shown: str) -> str:
    """``edit_file`` on ``path`` (checked by the caller); returns the notes and the diff."""
    original, mode = read_for_edit(ws, path)
    content, notes = _edited(original, edits)
    diff = "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True),
            content.splitlines(keepends=True),
            f"{shown}\toriginal",
            f"{shown}\tmodified",
        )
    )
    fence = "```"
    while fence in diff:
        fence += "`"
    if not dry_run:
        nofollow.replace_file(ws.root, path, content.encode("utf-8"), mode)
    return "\n".join(notes) + f"\n\n{fence}diff\n{diff}{fence}\n\n"
