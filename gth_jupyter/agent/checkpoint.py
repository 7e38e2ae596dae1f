"""Where threads are kept: an SQLite file by default, or memory on request.

The async SQLite saver needs a connection opened on the running event loop, so the store is
opened lazily by the first run and closed by the host at shutdown.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_data_dir
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver


def default_checkpoint_path() -> Path:
    return Path(jupyter_data_dir()) / "gth_jupyter" / "threads.sqlite"


class CheckpointStore:
    """Opens the configured checkpointer once and hands out the same saver."""

    def __init__(self, kind: str = "sqlite", path: Path | str | None = None) -> None:
        if kind not in ("sqlite", "memory"):
            raise ValueError(f"Unknown checkpointer '{kind}': use 'sqlite' or 'memory'.")
        self.kind = kind
        self.path = Path(path) if path else default_checkpoint_path()
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._conn: Any = None
        self._lock = asyncio.Lock()

    async def get(self) -> BaseCheckpointSaver[Any]:
        if self._saver is not None:
            return self._saver
        async with self._lock:
            if self._saver is None:
                self._saver = await self._open()
        return self._saver

    async def _open(self) -> BaseCheckpointSaver[Any]:
        if self.kind == "memory":
            return InMemorySaver()
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = await aiosqlite.connect(str(self.path))
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
