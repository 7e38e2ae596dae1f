"""Run leases in PostgreSQL: one run per thread across every server sharing the database.

A lease is a row of ``gth_run_leases`` with an expiry. Taking one is a single statement that
inserts the row, or takes over a row whose lease has expired, and returns nothing when another
holder's lease is still alive; so two servers racing for a thread cannot both win. While a run
holds its lease, a background task pushes the expiry forward every third of the lease's length;
a holder that dies (even by ``SIGKILL``) stops renewing, and its thread is free again within
``lease_seconds``. Expiry is judged by the database's clock alone, so servers' clocks need not
agree.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from typing import Any

from .base import RunLease

__all__ = ["LEASES_SCHEMA", "PostgresLeases"]

log = logging.getLogger(__name__)

#: Unqualified, so that a per-user ``search_path`` puts it in the user's own schema.
LEASES_SCHEMA = """
CREATE TABLE IF NOT EXISTS gth_run_leases (
    thread_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
)
"""

_ACQUIRE = """
INSERT INTO gth_run_leases AS lease (thread_id, run_id, holder, expires_at)
VALUES (%(thread)s, %(run)s, %(holder)s, now() + make_interval(secs => %(seconds)s))
ON CONFLICT (thread_id) DO UPDATE
    SET run_id = excluded.run_id, holder = excluded.holder, expires_at = excluded.expires_at
    WHERE lease.expires_at < now()
RETURNING thread_id
"""
_RENEW = """
UPDATE gth_run_leases SET expires_at = now() + make_interval(secs => %(seconds)s)
WHERE thread_id = %(thread)s AND holder = %(holder)s AND run_id = %(run)s
RETURNING thread_id
"""
_HOLDER = "SELECT run_id FROM gth_run_leases WHERE thread_id = %s AND expires_at > now()"
_DELETE = "DELETE FROM gth_run_leases WHERE thread_id = %s AND holder = %s AND run_id = %s"
_DELETE_ALL = "DELETE FROM gth_run_leases WHERE holder = %s"


class _PostgresLease:
    """One held lease; :meth:`release` is synchronous, idempotent and never raises."""

    def __init__(self, owner: PostgresLeases, thread_id: str, run_id: str) -> None:
        self._owner = owner
        self.thread_id = thread_id
        self.run_id = run_id
        self._renewal: asyncio.Task[None] | None = None
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        try:
            self._owner._release(self)
        except Exception:  # a release must never fail its caller; the row expires anyway
            log.exception("gth-jupyter: could not release the lease on a thread")


class PostgresLeases:
    """Leases on threads as rows of ``gth_run_leases``, shared by every process of a database.

    ``pool`` is a ``psycopg_pool.AsyncConnectionPool`` in autocommit mode; ``holder`` names
    this process in the table (random by default, so a restarted process is a new holder).
    """

    def __init__(self, pool: Any, lease_seconds: float, holder: str | None = None) -> None:
        self._pool = pool
        self.lease_seconds = float(lease_seconds)
        self.holder_id = holder or (f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(8)}")
        self._held: dict[tuple[str, str], _PostgresLease] = {}
        # Deletes scheduled by release(), by thread: a later acquire or holder() in this
        # process waits for them, so a release is seen at once here, as with a file lock.
        self._releasing: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def acquire(self, thread_id: str, run_id: str = "") -> RunLease | None:
        self._loop = asyncio.get_running_loop()
        await self._settle(thread_id)
        args = {
            "thread": thread_id,
            "run": run_id,
            "holder": self.holder_id,
            "seconds": self.lease_seconds,
        }
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_ACQUIRE, args)).fetchone()
        if row is None:
            return None
        lease = _PostgresLease(self, thread_id, run_id)
        self._held[(thread_id, run_id)] = lease
        lease._renewal = self._track(self._renew(lease))
        return lease

    async def holder(self, thread_id: str) -> str | None:
        await self._settle(thread_id)
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_HOLDER, (thread_id,))).fetchone()
        return None if row is None else str(row["run_id"])

    async def close(self) -> None:
        """Releases every lease this process holds (other servers need not wait for expiry)."""
        for lease in list(self._held.values()):
            lease._released = True
            if lease._renewal is not None:
                lease._renewal.cancel()
        self._held.clear()
        pending = list(self._tasks)
        for task in pending:
            if task not in self._releasing.values():
                task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        try:
            # Bounded: a database already gone must not hold a server's shutdown for long.
            async with self._pool.connection(timeout=5.0) as conn:
                await conn.execute(_DELETE_ALL, (self.holder_id,))
        except Exception:
            log.exception("gth-jupyter: could not release this server's run leases")

    def _release(self, lease: _PostgresLease) -> None:
        if lease._renewal is not None:
            lease._renewal.cancel()
        self._held.pop((lease.thread_id, lease.run_id), None)
        coro = self._delete(lease)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        loop = self._loop
        if running is not None and running is loop:
            self._releasing[lease.thread_id] = self._track(coro)
        elif loop is not None and loop.is_running() and not loop.is_closed():
            # Released from another thread (a sync caller): the delete runs on the pool's loop.
            loop.call_soon_threadsafe(self._schedule_delete, lease.thread_id, coro)
        else:
            coro.close()  # no loop left to run it: the row simply expires

    def _schedule_delete(self, thread_id: str, coro: Any) -> None:
        self._releasing[thread_id] = self._track(coro)

    async def _delete(self, lease: _PostgresLease) -> None:
        try:
            async with self._pool.connection() as conn:
                await conn.execute(_DELETE, (lease.thread_id, self.holder_id, lease.run_id))
        except Exception:
            log.exception("gth-jupyter: could not release the lease on a thread; it expires")
        finally:
            if self._releasing.get(lease.thread_id) is asyncio.current_task():
                del self._releasing[lease.thread_id]

    async def _settle(self, thread_id: str) -> None:
        pending = self._releasing.get(thread_id)
        if pending is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(pending)

    async def _renew(self, lease: _PostgresLease) -> None:
        args = {
            "thread": lease.thread_id,
            "run": lease.run_id,
            "holder": self.holder_id,
            "seconds": self.lease_seconds,
        }
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                async with self._pool.connection() as conn:
                    row = await (await conn.execute(_RENEW, args)).fetchone()
            except Exception as exc:  # a passing outage: the next renewal may still be in time
                log.warning("gth-jupyter: could not renew a run lease: %s", exc)
                continue
            if row is None:
                log.warning(
                    "gth-jupyter: the lease on a thread expired while its run went on "
                    "(the server was stalled longer than %s s); another run may start on it",
                    self.lease_seconds,
                )
                return

    def _track(self, coro: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task
