"""Opens the configured store once: the checkpointer threads live in, its run leases and its
thread index.

``sqlite`` (the default) keeps threads in a file and leases them with file locks; ``memory``
keeps them in this process; ``postgres`` keeps threads, the index and leases in a PostgreSQL
database shared by many server processes (see :mod:`gth_jupyter.store.postgres`). The async
savers need a connection opened on the running event loop, so the store opens lazily, on first
use, and the host closes it at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_core.paths import jupyter_data_dir

from .base import DEFAULT_LEASE_SECONDS, RunLeases, ThreadIndex
from .local import LocalLeases, MemoryThreads
from .sqlite import FileLeases, SqliteThreads

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

__all__ = ["KINDS", "CheckpointStore", "default_checkpoint_path"]

log = logging.getLogger(__name__)

KINDS = ("sqlite", "memory", "postgres")
#: How often an SQLite store's set-up is tried when another process holds the new file.
_SETUP_ATTEMPTS = 8


def default_checkpoint_path() -> Path:
    return Path(jupyter_data_dir()) / "gth_jupyter" / "threads.sqlite"


class CheckpointStore:
    """The saver, leases and thread index of one store, opened once and shared by a host's
    runtimes."""

    def __init__(
        self,
        kind: str = "sqlite",
        path: Path | str | None = None,
        *,
        url: str | None = None,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(
                f"Unknown checkpointer '{kind}': use 'sqlite', 'memory' or 'postgres'."
            )
        if kind == "postgres" and not url:
            raise ValueError(
                "The postgres checkpointer needs a database URL: set $GTH_JUPYTER_DATABASE_URL "
                "or the server's database_url setting."
            )
        self.kind = kind
        self.path = Path(path) if path else default_checkpoint_path()
        self.url = url
        self.lease_seconds = lease_seconds
        self._leases: RunLeases = (
            FileLeases(self.path.with_name(self.path.name + ".locks"))
            if kind == "sqlite"
            else LocalLeases()
        )
        self._threads: ThreadIndex = MemoryThreads()
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._close: Callable[[], Awaitable[None]] | None = None
        self._lock = asyncio.Lock()

    @property
    def leases(self) -> RunLeases:
        """The run leases (for ``postgres``, valid once the store is open)."""
        return self._leases

    @property
    def threads(self) -> ThreadIndex:
        """The thread index (for ``sqlite`` and ``postgres``, valid once the store is open)."""
        return self._threads

    @property
    def is_open(self) -> bool:
        """Whether the saver (and its connections) is open."""
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
        if self.kind == "postgres":
            from .postgres import open_postgres

            assert self.url is not None
            opened = await open_postgres(self.url, lease_seconds=self.lease_seconds)
            self._leases, self._threads, self._close = opened.leases, opened.threads, opened.close
            return opened.saver
        return await self._open_sqlite()

    async def _open_sqlite(self) -> BaseCheckpointSaver[Any]:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        self.path.parent.mkdir(parents=True, exist_ok=True)
        connecting = aiosqlite.connect(str(self.path))
        # aiosqlite works on a non-daemon thread, which would keep a kernel or a script from
        # exiting until the store is closed; SQLite's journal makes an exit mid-write safe.
        worker = getattr(connecting, "_thread", None)
        if worker is not None:
            worker.daemon = True
        conn = await connecting
        saver = AsyncSqliteSaver(conn)
        threads = SqliteThreads(conn, saver.lock)
        for attempt in range(_SETUP_ATTEMPTS):
            try:
                # WAL lets a notebook kernel read history while the server writes.
                await conn.execute("PRAGMA journal_mode=WAL")
                await saver.setup()
                await threads.setup()
                break
            except sqlite3.OperationalError as exc:
                # Two processes creating one new file at once: SQLite refuses one of them at
                # once (no busy wait for a lock upgrade); it tries again a moment later.
                if "locked" not in str(exc) or attempt == _SETUP_ATTEMPTS - 1:
                    await conn.close()
                    raise
                with contextlib.suppress(Exception):
                    await conn.rollback()
                saver.is_setup = False
                await asyncio.sleep(0.1 * (attempt + 1))
        self._threads = threads
        self._close = conn.close
        return saver

    async def close(self) -> None:
        close, self._close = self._close, None
        if close is not None:
            await close()
        self._saver = None
