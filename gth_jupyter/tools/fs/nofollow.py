"""Opening a checked path without following a symlink that appeared after the check.

The :class:`~gth_jupyter.tools.workspace.Workspace` checks a path with every symlink resolved.
Between that check and the open, the agent (a shell command, a kernel cell) could swap a directory
of the path for a symlink to ``/etc``; opening the checked path by name would then follow it. So
the tools open the *resolved* path one component at a time from a descriptor of the working
directory: each directory with ``O_DIRECTORY | O_NOFOLLOW``, the last component with
``O_NOFOLLOW``. A resolved path holds no symlinks, so any symlink met on the way is a swap, and
the open fails closed with :class:`PathDenied`.

Only the standard library is imported here: ``gth_grep``'s worker process opens its files with
it without loading the tools.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "PathDenied",
    "directory_of",
    "make_dirs",
    "open_directory",
    "open_file",
    "replace_file",
    "stat_entry",
]

#: Without ``dir_fd`` support (Windows) the walk cannot be done; paths are then opened by name.
_WALKS = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC


class PathDenied(Exception):
    """A path the tools may not touch; the message is written for the model."""


def _swapped(root: Path, path: Path) -> PathDenied:
    shown = path.relative_to(root).as_posix()
    return PathDenied(
        f"Access denied - {shown} changed into a symlink after it was checked, so it was not opened"
    )


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _step(root: Path, path: Path, name: str, dir_fd: int) -> int:
    """The directory ``name`` below ``dir_fd``, opened without following a symlink."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        # O_NOFOLLOW | O_DIRECTORY on a symlink fails with ENOTDIR or ELOOP; so does a plain
        # file in the way, which is not a swap and keeps its own error.
        if exc.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(name, dir_fd):
            raise _swapped(root, path) from None
        raise


@contextmanager
def directory_of(root: Path, path: Path, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """A descriptor of ``path``'s directory, reached from ``root`` without following symlinks,
    and ``path``'s last component (``"."`` for the root itself). With ``create``, missing
    directories on the way are made. ``path`` is resolved and inside ``root``."""
    parts = path.relative_to(root).parts
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for name in parts[:-1]:
            if create:
                try:
                    os.mkdir(name, dir_fd=fd)
                except FileExistsError:
                    pass
            inner = _step(root, path, name, fd)
            os.close(fd)
            fd = inner
        yield fd, parts[-1] if parts else "."
    finally:
        os.close(fd)


def _open_fd(root: Path, path: Path, flags: int, mode: int, create_dirs: bool) -> int:
    if not _WALKS:
        return os.open(path, flags | _CLOEXEC, mode)
    with directory_of(root, path, create=create_dirs) as (fd, name):
        try:
            return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and _is_link(name, fd)):
                raise _swapped(root, path) from None
            raise


def open_file(root: Path, path: Path, mode: str = "rb", *, create_dirs: bool = False) -> BinaryIO:
    """``path`` opened as a binary file: ``"rb"``, ``"wb"`` (created or truncated; ``create_dirs``
    makes missing parents) or ``"xb"`` (created, must not exist); no symlink is followed, and
    only a regular file is opened."""
    flags = {
        # O_NONBLOCK: a FIFO planted in the tree must not hang the open (regular files ignore it).
        "rb": os.O_RDONLY | getattr(os, "O_NONBLOCK", 0),
        "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NONBLOCK", 0),
        "xb": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    }[mode]
    fd = _open_fd(root, path, flags, 0o666, create_dirs)
    try:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(kind):
            raise OSError(errno.EINVAL, f"{path.name} is not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb") if mode == "rb" else os.fdopen(fd, "wb")


def open_directory(root: Path, path: Path) -> int:
    """A descriptor of the directory ``path`` (``root`` or below), no symlink followed."""
    if not _WALKS:
        return os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    with directory_of(root, path) as (fd, name):
        return _step(root, path, name, fd)


def replace_file(root: Path, path: Path, data: bytes, mode: int) -> None:
    """Put ``data`` at ``path`` at once: written to a new file beside it (``mode`` bits), then
    renamed over it, so a reader never sees half a file and a failed write leaves it as it was.
    The rename replaces whatever entry is there now, a link included; it never writes through
    one."""
    if not _WALKS:
        beside = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        with open(beside, "xb") as f:
            f.write(data)
        os.chmod(beside, mode)
        os.replace(beside, path)
        return
    with directory_of(root, path) as (fd, name):
        temp = f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
        out = os.open(temp, flags, 0o600, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as f:
                f.write(data)
                os.fchmod(f.fileno(), mode)
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(temp, dir_fd=fd)
            raise


def make_dirs(root: Path, path: Path) -> None:
    """``mkdir -p path`` below ``root``, each step made and entered without following a link."""
    if not _WALKS:
        path.mkdir(parents=True, exist_ok=True)
        return
    with directory_of(root, path, create=True) as (fd, name):
        if name == ".":
            return
        try:
            os.mkdir(name, dir_fd=fd)
        except FileExistsError:
            pass
        os.close(_step(root, path, name, fd))  # it must be a directory, and not a link


def stat_entry(root: Path, path: Path) -> os.stat_result:
    """``path``'s own status, its directories walked without following links; a link there
    now is a swap."""
    if not _WALKS:
        return path.stat()
    with directory_of(root, path) as (fd, name):
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        raise _swapped(root, path)
    return st
