"""One contract for run leases that reach across processes: file locks (SQLite store) and rows
with an expiry (PostgreSQL store). A holder killed with SIGKILL frees its thread: at once for a
file lock, within ``lease_seconds`` for a row (2 s here)."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE

import pytest
import pytest_asyncio

from gth_jupyter.store import FileLeases, RunLeases
from gth_jupyter.store.postgres import open_postgres

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock leases are POSIX")

LEASE_SECONDS = 2.0

#: A holder in a process of its own: takes the lease, says READY, and waits to be killed.
HOLDER = r"""
import asyncio, sys, time
kind, where, thread, run = sys.argv[1:5]
if kind == "file":
    from pathlib import Path
    from gth_jupyter.store import FileLeases
    lease = FileLeases(Path(where)).acquire_now(thread, run)
    print("READY" if lease else "BUSY", flush=True)
    time.sleep(600)
else:
    from gth_jupyter.store.postgres import open_postgres

    async def hold():
        store = await open_postgres(where, lease_seconds=float(sys.argv[5]))
        lease = await store.leases.acquire(thread, run)
        print("READY" if lease else "BUSY", flush=True)
        await asyncio.sleep(600)

    asyncio.run(hold())
"""


@dataclass
class Stores:
    kind: str
    where: str
    mine: RunLeases
    other: RunLeases  # as another process sees them


@pytest_asyncio.fixture(params=["file", "postgres"])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    if request.param == "file":
        folder = tmp_path / "locks"
        yield Stores("file", str(folder), FileLeases(folder), FileLeases(folder))
        return
    url = request.getfixturevalue("pg_url")
    mine = await open_postgres(url, lease_seconds=LEASE_SECONDS)
    other = await open_postgres(url, lease_seconds=LEASE_SECONDS)
    try:
        yield Stores("postgres", url, mine.leases, other.leases)
    finally:
        await mine.close()
        await other.close()


async def eventually_free(leases: RunLeases, thread: str, within: float) -> float:
    """Seconds until ``thread`` could be leased (the lease is released again)."""
    start = time.monotonic()
    while True:
        lease = await leases.acquire(thread, "probe")
        if lease is not None:
            lease.release()
            assert await leases.holder(thread) is None  # the release has landed
            return time.monotonic() - start
        assert time.monotonic() - start < within, f"{thread} still held after {within} s"
        await asyncio.sleep(0.1)


async def test_a_lease_excludes_every_other_holder_until_released(stores: Stores) -> None:
    first = await stores.mine.acquire("nb-1", "run-1")
    assert first is not None
    assert await stores.other.acquire("nb-1", "run-2") is None  # another process
    assert await stores.mine.acquire("nb-1", "run-3") is None  # this one, too
    assert await stores.other.holder("nb-1") == "run-1"
    second = await stores.other.acquire("nb-2", "run-4")
    assert second is not None
    first.release()
    first.release()  # idempotent
    assert await stores.mine.holder("nb-1") is None  # seen at once by the releasing process
    await eventually_free(stores.other, "nb-1", within=10)
    again = await stores.mine.acquire("nb-1", "run-5")
    assert again is not None
    assert await stores.other.holder("nb-1") == "run-5"
    again.release()
    second.release()
    assert await stores.other.holder("never-leased") is None


async def test_a_held_lease_outlives_its_lease_seconds(stores: Stores) -> None:
    lease = await stores.mine.acquire("long-run", "r")
    assert lease is not None
    await asyncio.sleep(LEASE_SECONDS * 1.5)  # renewed in the background meanwhile
    assert await stores.other.acquire("long-run", "r2") is None
    assert await stores.other.holder("long-run") == "r"
    lease.release()


async def test_a_release_from_another_thread_still_frees_the_lease(stores: Stores) -> None:
    lease = await stores.mine.acquire("sync", "r")
    assert lease is not None
    await asyncio.to_thread(lease.release)
    await eventually_free(stores.other, "sync", within=10)


async def test_a_holder_killed_with_sigkill_frees_the_thread_within_the_lease(
    stores: Stores,
) -> None:
    args = [stores.kind, stores.where, "nb-killed", "doomed", str(LEASE_SECONDS)]
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLDER, *args, stdout=PIPE, stderr=PIPE
    )
    try:
        assert holder.stdout is not None and holder.stderr is not None
        line = (await asyncio.wait_for(holder.stdout.readline(), 60)).decode().strip()
        assert line == "READY", (line, (await holder.stderr.read()).decode())
        assert await stores.other.holder("nb-killed") == "doomed"
        assert await stores.other.acquire("nb-killed", "mine") is None
        holder.send_signal(signal.SIGKILL)
        await asyncio.wait_for(holder.wait(), 30)
        # A row expires within LEASE_SECONDS of its last renewal (the bound is generous for a
        # loaded machine); the OS drops a dead process's flock at once.
        within = LEASE_SECONDS + 15 if stores.kind == "postgres" else 5
        await eventually_free(stores.other, "nb-killed", within=within)
    finally:
        if holder.returncode is None:
            holder.kill()
        await holder.wait()


async def test_closing_a_store_frees_its_leases_at_once(pg_url: str) -> None:
    leaving = await open_postgres(pg_url, lease_seconds=60)
    staying = await open_postgres(pg_url, lease_seconds=60)
    try:
        assert await leaving.leases.acquire("t", "r") is not None
        assert await staying.leases.acquire("t", "r2") is None
        await leaving.close()
        assert await staying.leases.holder("t") is None  # no 60 s wait
        lease = await staying.leases.acquire("t", "r2")
        assert lease is not None
        lease.release()
    finally:
        await staying.close()
