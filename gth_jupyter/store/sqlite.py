"""The zero-setup store: threads in an SQLite file, leases as file locks beside it.

Several processes share one SQLite file: the Jupyter server extension, the agent a kernel runs
for a widget's comm, a ``Session`` in a notebook. A lease is an OS file lock (``flock``) on a
per-thread file in a folder beside the database, so the operating system releases it when its
holder exits or is killed; nothing is left to clean up.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .base import RunLease, RunRecord, ThreadRecord
from .local import utc_now

try:
    import fcntl
except ImportError:  # Windows: no flock; leases there are in-process only
    fcntl = None  # type: ignore[assignment]

__all__ = ["FileLeases", "SqliteThreads"]


class _NoLease:
    def release(self) -> None:
        pass


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
    """Leases as ``flock`` locks on ``{directory}/{hash of the thread id}.lock``, holding the
    run id.

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

    async def acquire(self, thread_id: str, run_id: str = "") -> RunLease | None:
        return self.acquire_now(thread_id, run_id)

    def acquire_now(self, thread_id: str, run_id: str = "") -> RunLease | None:
        """:meth:`acquire`, for a caller outside an event loop (it never blocks)."""
        if fcntl is None:
            return _NoLease()
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path_for(thread_id), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # The run id, for a process asking who holds the thread (see ``holder``).
            os.ftruncate(fd, 0)
            os.pwrite(fd, run_id.encode("utf-8", "replace"), 0)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return _FileLease(fd)

    async def holder(self, thread_id: str) -> str | None:
        if fcntl is None:
            return None
        try:
            fd = os.open(self.path_for(thread_id), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return os.pread(fd, 1024, 0).decode("utf-8", "replace")
            return None  # closing the descriptor drops the shared lock
        finally:
            os.close(fd)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS gth_threads (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS gth_threads_owner ON gth_threads (owner, updated_at);
CREATE TABLE IF NOT EXISTS gth_runs (
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    parent_run_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    cell_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, run_id)
);
CREATE TABLE IF NOT EXISTS gth_model_calls (
    thread_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (thread_id, message_id)
);
"""


class SqliteThreads:
    """The thread index as a table in the store's SQLite file (an ``aiosqlite`` connection)."""

    def __init__(self, conn: Any, lock: Any = None) -> None:
        self._conn = conn
        # The saver's own lock on the shared connection, so a commit here never lands inside
        # one of its writes.
        self._lock = lock if lock is not None else contextlib.nullcontext()

    async def setup(self) -> None:
        async with self._lock:
            await self._conn.executescript(_SCHEMA)
            await self._conn.commit()

    async def owner(self, thread_id: str) -> str | None:
        async with self._conn.execute(
            "SELECT owner FROM gth_threads WHERE thread_id = ?", (thread_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return str(row[0]) if row is not None else None

    async def claim(self, thread_id: str, owner: str) -> str:
        now = utc_now()
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO gth_threads (thread_id, owner, created_at, updated_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (thread_id) DO UPDATE SET updated_at = ?",
                (thread_id, owner, now, now, now),
            )
            await self._conn.commit()
        found = await self.owner(thread_id)
        return found if found is not None else owner

    async def list(self, owner: str | None) -> list[ThreadRecord]:
        query = "SELECT thread_id, owner, created_at, updated_at FROM gth_threads"
        args: tuple[str, ...] = ()
        if owner is not None:
            query += " WHERE owner = ?"
            args = (owner,)
        async with self._conn.execute(query + " ORDER BY updated_at DESC", args) as cursor:
            rows = await cursor.fetchall()
        return [ThreadRecord(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]

    async def add_run(self, thread_id: str, record: RunRecord) -> None:
        async with self._lock:
            await self._conn.execute(
                "INSERT INTO gth_runs (thread_id, run_id, parent_run_id, turn_id, cell_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    thread_id,
                    record.run_id,
                    record.parent_run_id,
                    record.turn_id,
                    record.cell_id,
                    record.created_at or utc_now(),
                ),
            )
            await self._conn.commit()

    async def runs(self, thread_id: str) -> Sequence[RunRecord]:
        async with self._conn.execute(
            "SELECT run_id, parent_run_id, turn_id, cell_id, created_at FROM gth_runs "
            "WHERE thread_id = ? ORDER BY created_at, rowid",
            (thread_id,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [RunRecord(*(str(v) for v in row)) for row in rows]

    async def add_model_calls(self, thread_id: str, calls: Mapping[str, str]) -> None:
        if not calls:
            return
        async with self._lock:
            await self._conn.executemany(
                "INSERT INTO gth_model_calls (thread_id, message_id, record) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [(thread_id, m, record) for m, record in calls.items()],
            )
            await self._conn.commit()

    async def model_calls(self, thread_id: str, message_ids: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(message_ids))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), 500):  # under SQLite's bound-parameter limit
            part = wanted[start : start + 500]
            marks = ", ".join("?" * len(part))
            async with self._conn.execute(
                f"SELECT message_id, record FROM gth_model_calls "
                f"WHERE thread_id = ? AND message_id IN ({marks})",
                (thread_id, *part),
            ) as cursor:
                found.update({str(m): str(r) for m, r in await cursor.fetchall()})
        return found
