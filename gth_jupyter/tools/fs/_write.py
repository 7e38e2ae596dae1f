"""The file tools that change things, with Gaunt Sloth's names, arguments and messages.

``write_file {path, content}`` (creates missing parent directories), ``edit_file {path, edits:
[{oldText, newText, replaceAll?}], dryRun?}`` (exact match, unique unless ``replaceAll``, else a
whitespace-tolerant line match; returns a unified diff), ``create_directory {path}``,
``move_file {source, destination}`` (fails if the destination exists), ``delete_file {path}``,
``delete_directory {path, recursive?}`` (never the working directory itself).

Paths go through the :class:`Workspace` (inside the working directory, symlinks resolved, not
hidden by ``.aiignore``), and each change is made on the *resolved* path reached from the working
directory without following a link (``nofollow``): one swapped in after the check is refused, and
a last component that is a link is never written through (``edit_file`` renames a new file over
it, ``move_file`` and ``delete_file`` act on the entry itself). ``edit_file`` refuses files over
4 MB without reading them (``_edit``).

Additions to Gaunt Sloth: these tools refuse to change what :mod:`~gth_jupyter.tools.fs.protected`
protects at any depth (``.aiignore``, the ``.gsloth`` configuration, what Python, IPython and
Jupyter run by themselves), so an agent can neither widen its own permissions for next time nor
plant code that runs unasked; they refuse to move or delete a directory holding a hidden or
protected path, which would carry it along; and a file named like an installed module is
written only as code (its kind, see ``kinds.py``).
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from pathlib import Path

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from gth_jupyter.tools._base import FileToolSpec, make_file_tools
from gth_jupyter.tools.fs import nofollow
from gth_jupyter.tools.fs._edit import EDIT_MAX_BYTES, Edit, apply_edits
from gth_jupyter.tools.fs.protected import protected_reason
from gth_jupyter.tools.fs.workspace import PathDenied, Workspace, guarded
from gth_jupyter.tools.kinds import CODE_WHEN_KEY

__all__ = ["WRITE_TOOLS", "make_write_tools"]

WRITE_TOOLS = (
    "write_file",
    "edit_file",
    "create_directory",
    "move_file",
    "delete_file",
    "delete_directory",
)


#: The argument naming the file each tool writes, and the one holding what it writes there.
_MODULE_PATHS = {
    "write_file": ("path", "content"),
    "edit_file": ("path", "edits"),
    "move_file": ("destination", "source"),
}


class WriteArgs(BaseModel):
    path: str
    content: str


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


def _writable(ws: Workspace, requested: str) -> Path:
    path = ws.resolve(requested)
    why = protected_reason(ws.relative(path))
    if why is not None:
        raise PathDenied(f"Access denied - {requested} {why}")
    return path


def _whole(ws: Workspace, path: Path, requested: str, verb: str) -> Path:
    """``path``, unless it is a directory holding something ``.aiignore`` hides (which one is
    not said: naming it would reveal what the file hides) or a protected path (a move would
    carry it where it applies elsewhere, a delete would lift it)."""
    if path.is_dir() and ws.hides_within(path):
        raise PathDenied(
            f"Access denied - {requested} contains paths hidden by .aiignore, so it cannot be "
            f"{verb} as a whole"
        )
    if path.is_dir():
        inside = _protected_within(ws, path)
        if inside is not None:
            raise PathDenied(
                f"Access denied - {requested} contains {inside}, which "
                f"{protected_reason(inside)}, so it cannot be {verb} as a whole"
            )
    return path


def _protected_within(ws: Workspace, directory: Path) -> str | None:
    """The first protected path at or below ``directory`` (links not followed), relative."""

    def unreadable(error: OSError) -> None:
        raise error  # what cannot be listed cannot be vouched for

    for current, dirs, files in os.walk(directory, onerror=unreadable):
        for name in (*dirs, *files):
            relative = ws.relative(Path(current, name))
            if protected_reason(relative) is not None:
                return relative
    return None


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
    with nofollow.directory_of(ws.root, path) as (fd, name):
        if recursive:
            if sys.version_info >= (3, 11):
                shutil.rmtree(name, dir_fd=fd)  # entered from fd: no link followed on the way
            else:
                shutil.rmtree(path)
            return f"Successfully deleted directory and all contents: {requested}"
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            raise ValueError(
                f"Directory not empty: {requested}. "
                "Use recursive: true to delete non-empty directories."
            ) from None
    return f"Successfully deleted empty directory: {requested}"


def make_write_tools(ws: Workspace, names: set[str]) -> list[BaseTool]:
    """The write tools in ``names``, bound to ``ws``."""

    def write(path: str, content: str) -> str:
        with ws.open(_writable(ws, path), "wb", create_dirs=True) as f:
            f.write(content.encode("utf-8"))
        return f"Successfully wrote to {path}"

    def move(source: str, destination: str) -> str:
        src, dst = _whole(ws, _writable(ws, source), source, "moved"), _writable(ws, destination)
        if dst.exists():
            raise ValueError(f"Destination already exists: {destination}")
        # Both ends reached without following a link; rename moves an entry, never a target.
        with nofollow.directory_of(ws.root, src) as (a, src_name):
            with nofollow.directory_of(ws.root, dst) as (b, dst_name):
                os.rename(src_name, dst_name, src_dir_fd=a, dst_dir_fd=b)
        return f"Successfully moved {source} to {destination}"

    def delete(path: str) -> str:
        target = _writable(ws, path)
        if target.is_dir():
            raise ValueError(
                f"Cannot delete directory: {path}. Use delete_directory for directories."
            )
        with nofollow.directory_of(ws.root, target) as (fd, name):
            os.unlink(name, dir_fd=fd)
        return f"Successfully deleted file: {path}"

    def mkdir(path: str) -> str:
        nofollow.make_dirs(ws.root, _writable(ws, path))
        return f"Successfully created directory {path}"

    async def write_file(path: str, content: str) -> str:
        return await guarded(f"writing file {path}", lambda: write(path, content))

    async def edit_file(path: str, edits: list[Edit], dryRun: bool = False) -> str:
        items = [Edit.model_validate(e) for e in edits]
        return await guarded(
            f"editing file {path}",
            lambda: apply_edits(ws, _writable(ws, path), items, dryRun, path),
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
            "Replace exact text in a file; returns a git-style diff. Read the file first. "
            f"Files over {EDIT_MAX_BYTES // (1024 * 1024)} MB are refused.",
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
    tools = make_file_tools(specs, names, "write")
    for tool in tools:
        if tool.name in _MODULE_PATHS:  # a module's name is written only as code
            path, code = _MODULE_PATHS[tool.name]
            when = {"module_path": path, "code": code}
            tool.metadata = {**(tool.metadata or {}), CODE_WHEN_KEY: when}
    return tools
