"""Where threads are kept, and who may run on each: an SQLite file by default, or memory.

The async SQLite saver needs a connection opened on the running event loop, so the store is
opened lazily by the first run and closed by the host at shutdown.

Several processes share one SQLite file: the Jupyter server extension, the agent a kernel runs
for a widget's comm, a ``Session`` in a notebook. One run at a time per thread must hold across
all of them, so the store also hands out **run leases** (:class:`RunLeases`): a lease on a thread
is held for the length of a run, and a second process asking for it is refused at once, as the
runtime refuses a second run in its own process. For SQLite a lease is an OS file lock
(``flock``) on a per-thread file in a folder beside the database, so the operating system
releases it when its holder exits or is killed; nothing is left to clean up. A memory store is
private to its process and leases nothing. A shared store on another engine (PostgreSQL) gives
its own leases through the same interface.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jupyter_core.paths import jupyter_data_dir

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

try:
    import fcntl
except ImportError:  # Windows: no flock; leases there are in-process only
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CheckpointStore",
    "FileLeases",
    "LocalLeases",
    "RunLease",
    "RunLeases",
    "default_checkpoint_path",
]

log = logging.getLogger(__name__)


def default_checkpoint_path() -> Path:
    return Path(jupyter_data_dir()) / "gth_jupyter" / "threads.sqlite"


class RunLease(Protocol):
    """The right to run on one thread, held until ``release`` (which is idempotent)."""

    def release(self) -> None: ...


class RunLeases(Protocol):
    """Hands out run leases on threads, across every process that shares a store."""

    def acquire(self, thread_id: str) -> RunLease | None:
        """A lease on ``thread_id``, or ``None`` at once when another holder has it."""
        ...


class _NoLease:
    def release(self) -> None:
        pass


class LocalLeases:
    """For a store no other process can see: every lease is granted (the runtime's own set of
    busy threads is all the exclusion needed)."""

    def acquire(self, thread_id: str) -> RunLease | None:
        return _NoLease()


class _FileLease:
    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor drops the flock

    def __del__(self) -> None:  # a lease dropped unreleased must not hold its thread forever
        self.release()


class FileLeases:
    """Leases as ``flock`` locks on ``{directory}/{hash of the thread id}.lock``.

    ``flock`` locks belong to an open file, so two leases in one process exclude each other just
    as two processes do, and the kernel releases a lock when its holder dies (even by
    ``SIGKILL``). Lock files are never deleted: removing one while another process has it open
    would let two holders lock two different files of the same name.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path_for(self, thread_id: str) -> Path:
        # Thread ids come from clients: hashed, they make safe, bounded file names.
        digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.directory / f"{digest}.lock"

    def acquire(self, thread_id: str) -> RunLease | None:
        if fcntl is None:
            return _NoLease()
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path_for(thread_id), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return _FileLease(fd)


class CheckpointStore:
    """Opens the configured checkpointer once and hands out the same saver, and the leases that
    keep one run per thread across the processes sharing it."""

    def __init__(self, kind: str = "sqlite", path: Path | str | None = None) -> None:
        if kind not in ("sqlite", "memory"):
            raise ValueError(f"Unknown checkpointer '{kind}': use 'sqlite' or 'memory'.")
        self.kind = kind
        self.path = Path(path) if path else default_checkpoint_path()
        self.leases: RunLeases = (
            FileLeases(self.path.with_name(self.path.name + ".locks"))
            if kind == "sqlite"
            else LocalLeases()
        )
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._conn: Any = None
        self._lock = asyncio.Lock()

    @property
    def is_open(self) -> bool:
        """Whether the saver (and, for SQLite, its connection) is open."""
        return self._saver is not None

    async def get(self) -> BaseCheckpointSaver[Any]:
        if self._saver is not None:
            return self._saver
        async with self._lock:
            if self._saver is None:
                self._saver = await self._open()
        return self._saver

    async def _open(self) -> BaseCheckpointSaver[Any]:
        if self.kind == "memory":
            from langgraph.checkpoint.memory import InMemorySaver

            return InMemorySaver()
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        self.path.parent.mkdir(parents=True, exist_ok=True)
        connecting = aiosqlite.connect(str(self.path))
        # aiosqlite works on a non-daemon thread, which would keep a kernel or a script from
        # exiting until the store is closed; SQLite's journal makes an exit mid-write safe.
        worker = getattr(connecting, "_thread", None)
        if worker is not None:
            worker.daemon = True
        self._conn = await connecting
        # WAL lets a notebook kernel read history while the server writes.
        await self._conn.execute("PRAGMA journal_mode=WAL")
        saver = AsyncSqliteSaver(self._conn)
        await saver.setup()
        return saver

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None
        self._saver = None
