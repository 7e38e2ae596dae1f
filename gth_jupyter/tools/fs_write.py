"""The file tools that change things, with Gaunt Sloth's names, arguments and messages.

``write_file {path, content}`` (creates missing parent directories), ``edit_file {path, edits:
[{oldText, newText, replaceAll?}], dryRun?}`` (exact match, unique unless ``replaceAll``, else a
whitespace-tolerant line match; returns a unified diff), ``create_directory {path}``,
``move_file {source, destination}`` (fails if the destination exists), ``delete_file {path}``,
``delete_directory {path, recursive?}`` (never the working directory itself).

Paths go through the :class:`Workspace` (inside the working directory, symlinks resolved, not
hidden by ``.aiignore``). Additions to Gaunt Sloth: these tools refuse to change ``.aiignore``
and the ``.gsloth`` configuration, so an agent cannot widen its own permissions for next time, and
they refuse to move or delete a directory holding a hidden path, which would carry it along.
"""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from gth_jupyter.tools._base import FileToolSpec, make_file_tools
from gth_jupyter.tools.workspace import PathDenied, Workspace, guarded

__all__ = ["WRITE_TOOLS", "make_write_tools"]

WRITE_TOOLS = (
    "write_file",
    "edit_file",
    "create_directory",
    "move_file",
    "delete_file",
    "delete_directory",
)


class WriteArgs(BaseModel):
    path: str
    content: str


class Edit(BaseModel):
    oldText: str = Field(description="Text to search for - must match exactly")
    newText: str = Field(description="Text to replace with")
    replaceAll: bool = Field(False, description="Replace every occurrence of oldText.")


class EditArgs(BaseModel):
    path: str
    edits: list[Edit]
    dryRun: bool = Field(False, description="Preview changes using git-style diff format")


class PathArgs(BaseModel):
    path: str


class MoveArgs(BaseModel):
    source: str
    destination: str


class DeleteDirArgs(BaseModel):
    path: str
    recursive: bool = Field(False, description="If true, delete directory and all its contents")


def _protected(ws: Workspace, path: Path) -> bool:
    # Case-folded: on a case-insensitive disk (macOS, Windows) ``.AIIGNORE`` *is* ``.aiignore``.
    rel = ws.relative(path).lower()
    first = rel.split("/", 1)[0]
    return rel == ".aiignore" or first == ".gsloth" or first.startswith(".gsloth.config.")


def _writable(ws: Workspace, requested: str) -> Path:
    path = ws.resolve(requested)
    if _protected(ws, path):
        raise PathDenied(f"Access denied - {requested} holds the agent's own settings")
    return path


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


def apply_edits(path: Path, edits: list[Edit], dry_run: bool, shown: str) -> str:
    original = path.read_text(encoding="utf-8").replace("\r\n", "\n")
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
        path.write_text(content, encoding="utf-8")
    return "\n".join(notes) + f"\n\n{fence}diff\n{diff}{fence}\n\n"


def _whole(ws: Workspace, path: Path, requested: str, verb: str) -> Path:
    """``path``, unless it is a directory holding something ``.aiignore`` hides (which one is
    not said: naming it would reveal what the file hides)."""
    if path.is_dir() and ws.hides_within(path):
        raise PathDenied(
            f"Access denied - {requested} contains paths hidden by .aiignore, so it cannot be "
            f"{verb} as a whole"
        )
    return path


def _delete_dir(ws: Workspace, requested: str, recursive: bool) -> str:
    path = _writable(ws, requested)
    if path == ws.root:
        raise ValueError(
            f"Cannot delete protected directory: {requested}. "
            "This is one of the allowed root directories."
        )
    _whole(ws, path, requested, "deleted")
    if not path.is_dir():
        raise ValueError(f"Not a directory: {requested}. Use delete_file for files.")
    if recursive:
        shutil.rmtree(path)
        return f"Successfully deleted directory and all contents: {requested}"
    if any(path.iterdir()):
        raise ValueError(
            f"Directory not empty: {requested}. "
            "Use recursive: true to delete non-empty directories."
        )
    path.rmdir()
    return f"Successfully deleted empty directory: {requested}"


def make_write_tools(ws: Workspace, names: set[str]) -> list[BaseTool]:
    """The write tools in ``names``, bound to ``ws``."""

    def write(path: str, content: str) -> str:
        target = _writable(ws, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"Successfully wrote to {path}"

    def move(source: str, destination: str) -> str:
        src, dst = _whole(ws, _writable(ws, source), source, "moved"), _writable(ws, destination)
        if dst.exists():
            raise ValueError(f"Destination already exists: {destination}")
        src.rename(dst)
        return f"Successfully moved {source} to {destination}"

    def delete(path: str) -> str:
        target = _writable(ws, path)
        if target.is_dir():
            raise ValueError(
                f"Cannot delete directory: {path}. Use delete_directory for directories."
            )
        target.unlink()
        return f"Successfully deleted file: {path}"

    def mkdir(path: str) -> str:
        _writable(ws, path).mkdir(parents=True, exist_ok=True)
        return f"Successfully created directory {path}"

    async def write_file(path: str, content: str) -> str:
        return await guarded(f"writing file {path}", lambda: write(path, content))

    async def edit_file(path: str, edits: list[Edit], dryRun: bool = False) -> str:
        items = [Edit.model_validate(e) for e in edits]
        return await guarded(
            f"editing file {path}", lambda: apply_edits(_writable(ws, path), items, dryRun, path)
        )

    async def create_directory(path: str) -> str:
        return await guarded(f"creating directory {path}", lambda: mkdir(path))

    async def move_file(source: str, destination: str) -> str:
        return await guarded(f"moving {source} to {destination}", lambda: move(source, destination))

    async def delete_file(path: str) -> str:
        return await guarded(f"deleting file {path}", lambda: delete(path))

    async def delete_directory(path: str, recursive: bool = False) -> str:
        return await guarded(f"deleting directory {path}", lambda: _delete_dir(ws, path, recursive))

    specs: list[FileToolSpec] = [
        (
            "write_file",
            "Create or overwrite a file (missing parent directories are created).",
            WriteArgs,
            write_file,
        ),
        (
            "edit_file",
            "Replace exact text in a file; returns a git-style diff. Read the file first.",
            EditArgs,
            edit_file,
        ),
        (
            "create_directory",
            "Create a directory, with missing parents; fine if it exists.",
            PathArgs,
            create_directory,
        ),
        (
            "move_file",
            "Move or rename a file or directory; fails if the destination exists.",
            MoveArgs,
            move_file,
        ),
        (
            "delete_file",
            "Delete a file (not a directory). Cannot be undone.",
            PathArgs,
            delete_file,
        ),
        (
            "delete_directory",
            "Delete a directory; recursive: true for a non-empty one. Cannot be undone.",
            DeleteDirArgs,
            delete_directory,
        ),
    ]
    return make_file_tools(specs, names, "write")
