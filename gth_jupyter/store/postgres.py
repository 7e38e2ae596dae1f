"""The shared store: threads, their index and run leases in one PostgreSQL database.

Many servers (one per JupyterHub user, or several standalone servers behind a balancer) share
it. What makes that safe:

- **A pool fit for PgBouncer** in transaction mode: no prepared statements, no pipeline mode, a
  check of each connection before use and a bound on idle ones.
- **Setup once**: LangGraph's ``setup()`` fails with ``UniqueViolation`` when several servers
  start at once, so it runs under an advisory lock (one per schema).
- **Strict msgpack**: LangGraph's default serializer imports and calls whatever callable a
  checkpoint names, so anyone able to write a row could run code in every server reading it.
  Here only LangGraph's built-in safe types and the few of ours that checkpoints hold load.
- **Unqualified table names**, so a per-user role whose ``search_path`` is its own schema (see
  :mod:`gth_jupyter.store.provision`) keeps each user's threads out of the others' reach.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from .base import RunLeases, RunRecord, ThreadIndex, ThreadRecord
from .postgres_leases import LEASES_SCHEMA, PostgresLeases

__all__ = [
    "CHECKPOINT_TYPES",
    "OpenedPostgres",
    "PostgresLeases",
    "PostgresThreads",
    "open_postgres",
    "strict_serializer",
]

log = logging.getLogger(__name__)

#: Types of ours found in checkpoints, beyond LangGraph's built-in safe list (LangChain
#: messages, ``Interrupt``, ``Command``, datetimes...), as (module, name). None so far: a whole
#: thread (a client tool answered with an image, an approval, shared state) stores only those
#: and plain JSON (tests/store/test_postgres_store.py fails on any type blocked or unlisted).
CHECKPOINT_TYPES: tuple[tuple[str, str], ...] = ()

_THREADS_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS gth_threads (
        thread_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )
    """,
    "CREATE INDEX IF NOT EXISTS gth_threads_owner ON gth_threads (owner, updated_at DESC)",
    """
    CREATE TABLE IF NOT EXISTS gth_runs (
        thread_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        parent_run_id TEXT NOT NULL,
        turn_id TEXT NOT NULL,
        cell_id TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        seq BIGSERIAL,
        PRIMARY KEY (thread_id, run_id)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS gth_model_calls (
        thread_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (thread_id, message_id)
    )
    """,
)
# One lock per schema (advisory locks are per database), so per-user schemas set up in parallel.
_LOCK_KEY = "hashtextextended('gth_jupyter:' || coalesce(current_schema(), ''), 0)"
_SETUP_LOCK = f"SELECT pg_try_advisory_lock({_LOCK_KEY}) AS got"
_SETUP_UNLOCK = f"SELECT pg_advisory_unlock({_LOCK_KEY}) AS released"
#: How long a server waits for another one's setup before it runs its own regardless (a lock
#: lost behind a pooler must not keep every server from starting).
_SETUP_WAIT_SECONDS = 120.0
_SETUP_POLL_SECONDS = 0.2


def strict_serializer() -> JsonPlusSerializer:
    """LangGraph's serializer, loading only allow-listed types (never an arbitrary callable)."""
    # An explicit allowlist turns strict mode on whatever $LANGGRAPH_STRICT_MSGPACK says;
    # LangGraph's SAFE_MSGPACK_TYPES are always allowed on top of it.
    return JsonPlusSerializer(allowed_msgpack_modules=CHECKPOINT_TYPES)


@dataclass
class OpenedPostgres:
    """What :class:`~gth_jupyter.store.CheckpointStore` takes from an opened database."""

    saver: BaseCheckpointSaver[Any]
    leases: RunLeases
    threads: ThreadIndex
    close: Callable[[], Awaitable[None]]


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


class PostgresThreads:
    """The thread index as the ``gth_threads`` table."""

    def __init__(self, pool: AsyncConnectionPool[Any]) -> None:
        self._pool = pool

    async def owner(self, thread_id: str) -> str | None:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT owner FROM gth_threads WHERE thread_id = %s", (thread_id,)
            )
            row = await cur.fetchone()
        return None if row is None else str(row["owner"])

    async def claim(self, thread_id: str, owner: str) -> str:
        async with self._pool.connection() as conn:
            # One statement: two servers claiming a new thread at once get the same owner.
            cur = await conn.execute(
                "INSERT INTO gth_threads AS t (thread_id, owner) VALUES (%s, %s) "
                "ON CONFLICT (thread_id) DO UPDATE SET updated_at = now() RETURNING t.owner",
                (thread_id, owner),
            )
            row = await cur.fetchone()
        return owner if row is None else str(row["owner"])

    async def list(self, owner: str | None) -> list[ThreadRecord]:
        query = "SELECT thread_id, owner, created_at, updated_at FROM gth_threads"
        args: tuple[str, ...] = ()
        if owner is not None:
            query += " WHERE owner = %s"
            args = (owner,)
        async with self._pool.connection() as conn:
            cur = await conn.execute(query + " ORDER BY updated_at DESC", args)
            rows = await cur.fetchall()
        return [
            ThreadRecord(
                str(r["thread_id"]), str(r["owner"]), _iso(r["created_at"]), _iso(r["updated_at"])
            )
            for r in rows
        ]

    async def add_run(self, thread_id: str, record: RunRecord) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(
                "INSERT INTO gth_runs (thread_id, run_id, parent_run_id, turn_id, cell_id) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (thread_id, record.run_id, record.parent_run_id, record.turn_id, record.cell_id),
            )

    async def runs(self, thread_id: str) -> Sequence[RunRecord]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT run_id, parent_run_id, turn_id, cell_id, created_at FROM gth_runs "
                "WHERE thread_id = %s ORDER BY seq",
                (thread_id,),
            )
            rows = await cur.fetchall()
        return [
            RunRecord(
                str(r["run_id"]),
                str(r["parent_run_id"]),
                str(r["turn_id"]),
                str(r["cell_id"]),
                _iso(r["created_at"]),
            )
            for r in rows
        ]

    async def add_model_calls(self, thread_id: str, calls: Mapping[str, str]) -> None:
        if not calls:
            return
        async with self._pool.connection() as conn, conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO gth_model_calls (thread_id, message_id, record) "
                "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(thread_id, m, record) for m, record in calls.items()],
            )

    async def model_calls(self, thread_id: str, message_ids: Sequence[str]) -> dict[str, str]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT message_id, record FROM gth_model_calls "
                "WHERE thread_id = %s AND message_id = ANY(%s)",
                (thread_id, list(dict.fromkeys(message_ids))),
            )
            rows = await cur.fetchall()
        return {str(r["message_id"]): str(r["record"]) for r in rows}


async def _set_up(url: str, saver: AsyncPostgresSaver, pool: AsyncConnectionPool[Any]) -> None:
    """Creates or migrates the tables, one server at a time.

    The lock is polled (``pg_try_advisory_lock`` on an idle connection), never waited for in a
    statement: LangGraph's migrations run ``CREATE INDEX CONCURRENTLY``, which waits for every
    statement in progress and every transaction holding a snapshot, so a server blocked in
    ``pg_advisory_lock``, or holding a transaction-scoped lock, would deadlock with it.
    """
    conn = await AsyncConnection.connect(
        url, autocommit=True, prepare_threshold=None, row_factory=dict_row
    )
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _SETUP_WAIT_SECONDS
        locked = False
        while not locked and loop.time() < deadline:
            row = await (await conn.execute(_SETUP_LOCK)).fetchone()
            locked = bool(row and row["got"])
            if not locked:
                await asyncio.sleep(_SETUP_POLL_SECONDS)
        if not locked:
            log.warning("gth-jupyter: another server's database setup did not finish; going on")
        await saver.setup()
        async with pool.connection() as setup:
            for statement in (*_THREADS_SCHEMA, LEASES_SCHEMA):
                await setup.execute(statement)
        if locked:
            row = await (await conn.execute(_SETUP_UNLOCK)).fetchone()
            if not (row and row["released"]):
                # Behind PgBouncer in transaction mode the unlock may reach another server
                # connection; the lock then lives until PgBouncer closes that connection.
                log.warning("gth-jupyter: the database setup lock was not released")
    finally:
        await conn.close()


async def open_postgres(
    url: str, *, lease_seconds: float, max_size: int = 10, timeout: float = 30.0
) -> OpenedPostgres:
    """Opens the pool on the running loop, sets the database up, and returns the saver, the
    run leases and the thread index; ``close`` releases this process's leases and the pool."""
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        url,
        open=False,
        min_size=1,
        max_size=max_size,
        max_idle=60,
        check=AsyncConnectionPool.check_connection,
        # No server-side prepared statements: PgBouncer in transaction mode hands each
        # transaction to any server connection, where a prepared name may not exist.
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
    )
    await pool.open(wait=True, timeout=timeout)
    try:
        saver = AsyncPostgresSaver(pool, serde=strict_serializer())
        # Writes go in a plain transaction, not pipeline mode (which breaks with SSL and poolers:
        # langgraph issue 5675).
        saver.supports_pipeline = False
        # The saver serialises every call on one asyncio.Lock, even with a pool (langgraph
        # issue 7259). The lock only guards a single shared connection (``_cursor``: the
        # pipeline case and the bare connection); with a pool each call takes a connection of
        # its own, so letting as many calls in as the pool has connections is safe.
        saver.lock = asyncio.Semaphore(max_size)  # type: ignore[assignment]
        await _set_up(url, saver, pool)
    except BaseException:
        await pool.close()
        raise
    leases = PostgresLeases(pool, lease_seconds)

    async def close() -> None:
        try:
            await leases.close()
        finally:
            await pool.close()

    return OpenedPostgres(saver=saver, leases=leases, threads=PostgresThreads(pool), close=close)
