"""Run journals shared through a real Redis: a second ``RedisJournals`` stands for another server
process re-attaching to a run of the first."""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from gth_jupyter.runs.journal import Journals, JournalTrimmedError, RunInfo
from gth_jupyter.runs.redis_shipper import RedisJournals
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]


def data(n: int) -> bytes:
    return b'data: {"n": %d}\n\n' % n


def framed(n: int) -> bytes:
    return b"id: %d\n" % n + data(n)


def frames(first: int, last: int) -> list[bytes]:
    return [framed(n) for n in range(first, last + 1)]


async def collect(batches: AsyncIterator[list[bytes]], timeout: float = 60) -> list[bytes]:
    async def run() -> list[bytes]:
        return [frame async for batch in batches for frame in batch]

    return await asyncio.wait_for(run(), timeout)


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def shipped(client: aioredis.Redis, run_id: str, n: int) -> None:
    """Waits until frame ``n`` of ``run_id`` is in Redis."""

    async def there() -> bool:
        return bool(await client.xrange(f"gth:run:{run_id}", min=f"{n}-0", max=f"{n}-0"))

    await eventually(there)


async def known(journals: RedisJournals, run_id: str) -> bool:
    return await journals.find(run_id) is not None


async def ended(journals: RedisJournals, run_id: str) -> bool:
    info = await journals.find(run_id)
    return info is not None and info.ended


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    c = aioredis.Redis.from_url(redis_url)
    yield c
    await c.aclose()


@pytest.fixture
async def two(redis_url: str) -> AsyncIterator[tuple[RedisJournals, RedisJournals]]:
    """The process running the run, and another one."""
    here, there = RedisJournals(redis_url), RedisJournals(redis_url)
    yield here, there
    await here.close()
    await there.close()


async def test_another_process_follows_a_run_from_the_start_and_from_a_last_event_id(
    two: tuple[RedisJournals, RedisJournals], client: aioredis.Redis
) -> None:
    here, there = two
    journal = here.open("r1", "t1", "alice")
    for n in range(1, 41):
        journal.append(data(n))
    await shipped(client, "r1", 40)
    from_start = asyncio.create_task(collect(there.follow("r1", 0)))
    from_middle = asyncio.create_task(collect(there.follow("r1", 25)))
    for n in range(41, 121):  # live frames, shipped while the followers read
        journal.append(data(n))
        if n % 10 == 0:
            await asyncio.sleep(0.01)
    journal.end()
    here.closed(journal)
    assert await from_start == frames(1, 120)
    assert await from_middle == frames(26, 120)
    assert await collect(there.follow("r1", 120)) == []


async def test_find_from_another_process_tells_thread_owner_and_end(
    two: tuple[RedisJournals, RedisJournals], client: aioredis.Redis
) -> None:
    here, there = two
    assert await there.find("r1") is None
    journal = here.open("r1", "t1", "alice")
    journal.append(data(1))
    await shipped(client, "r1", 1)
    assert await there.find("r1") == RunInfo("r1", "t1", "alice", ended=False)
    assert await here.find("r1") == RunInfo("r1", "t1", "alice", ended=False)
    journal.end()
    here.closed(journal)
    await eventually(lambda: ended(there, "r1"))
    assert await there.find("r1") == RunInfo("r1", "t1", "alice", ended=True)


async def test_a_run_without_frames_ends_for_its_followers(
    two: tuple[RedisJournals, RedisJournals],
) -> None:
    here, there = two
    journal = here.open("r1", "t1", "alice")
    await eventually(lambda: known(there, "r1"))
    follower = asyncio.create_task(collect(there.follow("r1", 0)))
    journal.end()
    here.closed(journal)
    assert await follower == []


async def test_the_journal_expires_retain_seconds_after_the_run_ended(
    redis_url: str, client: aioredis.Redis
) -> None:
    here, there = RedisJournals(redis_url, retain=0.3), RedisJournals(redis_url, retain=0.3)
    try:
        journal = here.open("r1", "t1", "alice")
        journal.append(data(1))
        journal.end()
        here.closed(journal)
        await shipped(client, "r1", 1)
        for key in ("gth:run:r1", "gth:run:r1:meta"):
            assert await client.pttl(key) != -1, key  # it has a TTL (-2: already gone)

        async def gone() -> bool:
            return not await client.exists("gth:run:r1", "gth:run:r1:meta", "gth:run:r1:live")

        await eventually(gone)
        assert await there.find("r1") is None
        with pytest.raises(JournalTrimmedError):
            await collect(there.follow("r1", 0))
    finally:
        await here.close()
        await there.close()


async def test_a_running_journal_has_a_rolling_ttl(
    two: tuple[RedisJournals, RedisJournals], client: aioredis.Redis
) -> None:
    here, _ = two
    journal = here.open("r1", "t1", "alice")
    journal.append(data(1))
    await shipped(client, "r1", 1)
    for key in ("gth:run:r1", "gth:run:r1:meta", "gth:run:r1:live"):
        assert await client.pttl(key) > 0, key  # nothing of a run outlives its process forever
    journal.end()
    here.closed(journal)


async def test_a_quiet_run_stays_live_by_its_heartbeat(
    redis_url: str, client: aioredis.Redis
) -> None:
    here, there = RedisJournals(redis_url, live=0.3), RedisJournals(redis_url)
    try:
        journal = here.open("r1", "t1", "alice")
        journal.append(data(1))
        await shipped(client, "r1", 1)
        await asyncio.sleep(1.0)  # no frame for three times the live key's TTL (a long tool call)
        assert await client.exists("gth:run:r1:live")
        info = await there.find("r1")
        assert info is not None and not info.ended
        journal.end()
        here.closed(journal)
    finally:
        await here.close()
        await there.close()


async def test_trimmed_frames_fail_before_anything_is_sent(redis_url: str) -> None:
    here, there = RedisJournals(redis_url, max_len=10), RedisJournals(redis_url)
    try:
        journal = here.open("r1", "t1", "alice")
        for n in range(1, 1001):
            journal.append(data(n))
        journal.end()
        here.closed(journal)
        await eventually(lambda: ended(there, "r1"))
        batches = there.follow("r1", 0)
        with pytest.raises(JournalTrimmedError):
            await anext(batches)
        assert await collect(there.follow("r1", 995)) == frames(996, 1000)
        # Locally the frames are still all there.
        assert await collect(here.follow("r1", 0)) == frames(1, 1000)
    finally:
        await here.close()
        await there.close()


async def test_followers_attaching_while_frames_are_shipped_miss_nothing_and_repeat_nothing(
    two: tuple[RedisJournals, RedisJournals], client: aioredis.Redis
) -> None:
    here, there = two
    journal = here.open("r1", "t1", "alice")
    total = 1000
    followers: list[tuple[int, asyncio.Task[list[bytes]]]] = []

    async def attach() -> None:
        # At whatever point the shipping has reached: from the start, near the tip, at the tip.
        tip = int(await client.xlen("gth:run:r1"))
        for start in {0, max(tip - 3, 0), tip}:
            followers.append((start, asyncio.create_task(collect(there.follow("r1", start)))))

    for n in range(1, total + 1):
        journal.append(data(n))
        if n % 5 == 0:
            await asyncio.sleep(0)
        if n % 50 == 0:
            await attach()
    journal.end()
    here.closed(journal)
    assert {start for start, _ in followers} - {0, total}  # some attached mid-run
    for start, follower in followers:
        assert await follower == frames(start + 1, total), start


async def test_many_concurrent_runs_all_ship_completely(
    two: tuple[RedisJournals, RedisJournals],
) -> None:
    here, there = two
    runs, tokens = 200, 200
    journals = [here.open(f"r{i}", f"t{i}", "alice") for i in range(runs)]
    for n in range(1, tokens + 1):  # token by token, every run at once
        for journal in journals:
            journal.append(data(n))
        await asyncio.sleep(0)
    for journal in journals:
        journal.end()
        here.closed(journal)
    results = await asyncio.gather(*(collect(there.follow(f"r{i}", 0)) for i in range(runs)))
    expected = frames(1, tokens)
    assert all(result == expected for result in results)


async def test_a_follower_elsewhere_stops_when_the_process_running_the_run_closes(
    two: tuple[RedisJournals, RedisJournals], client: aioredis.Redis
) -> None:
    here, there = two
    journal = here.open("r1", "t1", "alice")
    journal.append(data(1))
    await shipped(client, "r1", 1)
    follower = asyncio.create_task(collect(there.follow("r1", 0)))
    journal.append(data(2))
    await here.close()  # the run is left unfinished: its last frame is flushed, then it is gone
    assert await follower == frames(1, 2)
    info = await there.find("r1")
    assert info is not None and info.ended


# -- a process that dies, a Redis that goes away --------------------------------------------

DYING = """
import asyncio, sys
import redis.asyncio as aioredis
from gth_jupyter.runs.redis_shipper import RedisJournals

async def main():
    url = sys.argv[1]
    journals = RedisJournals(url, live=1.0)
    journal = journals.open("r1", "t1", "alice")
    for n in range(1, 6):
        journal.append(b"data: %d\\n\\n" % n)
    client = aioredis.Redis.from_url(url)
    while not await client.xrange("gth:run:r1", min="5-0", max="5-0"):
        await asyncio.sleep(0.02)
    print("shipped", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


async def test_a_follower_elsewhere_stops_when_the_process_running_the_run_dies(
    redis_url: str,
) -> None:
    dying = await asyncio.create_subprocess_exec(
        sys.executable, "-c", DYING, redis_url, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert dying.stdout is not None
        line = await asyncio.wait_for(dying.stdout.readline(), 60)
        assert line.strip() == b"shipped"
    finally:
        dying.kill()  # no goodbye: its live key is left to expire
        await dying.wait()
    there = RedisJournals(redis_url, live=1.0)  # it checks the run's process every second
    try:
        got = await collect(there.follow("r1", 0), timeout=60)
        assert got == [b"id: %d\ndata: %d\n\n" % (n, n) for n in range(1, 6)]
        info = await there.find("r1")
        assert info is not None and info.ended  # its process is gone: it is over
    finally:
        await there.close()


class OwnRedis:
    """A throwaway redis-server of one test's own, which it stops and starts again (same port,
    empty again: no persistence)."""

    def __init__(self, folder: str) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.folder = folder
        self.server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.server = subprocess.Popen(
            [
                *("redis-server", "--bind", "127.0.0.1", "--port", str(self.port)),
                *("--save", "", "--appendonly", "no", "--dir", self.folder),
            ],
            stdout=subprocess.DEVNULL,
        )
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            self.server.wait()


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    folder = tempfile.mkdtemp(prefix="gth-redis-")
    server = OwnRedis(folder)
    server.start()
    yield server
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


async def test_redis_going_away_mid_run_breaks_neither_the_run_nor_local_followers(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_redis.url
    here = RedisJournals(url, close_timeout=2)
    client = aioredis.Redis.from_url(url)
    try:
        journal = here.open("r1", "t1", "alice")
        local = asyncio.create_task(collect(here.follow("r1", 0)))
        for n in range(1, 11):
            journal.append(data(n))
        await shipped(client, "r1", 10)
        await client.aclose()
        own_redis.stop()
        with caplog.at_level(logging.WARNING, "gth_jupyter.runs.redis_shipper"):
            for n in range(11, 31):
                journal.append(data(n))  # never waits for Redis
                await asyncio.sleep(0.05)
            own_redis.start()  # back: the shipper catches up
            client = aioredis.Redis.from_url(url)
            for n in range(31, 41):
                journal.append(data(n))
            journal.end()
            here.closed(journal)
            assert await local == frames(1, 40)
            elsewhere = RedisJournals(url)
            try:
                await eventually(lambda: ended(elsewhere, "r1"), timeout=60)
            finally:
                await elsewhere.close()
        warnings = [r for r in caplog.records if "r1" in r.getMessage()]
        assert len(warnings) == 1, warnings  # once per run, however long Redis was away
        # Redis came back empty: what was shipped after it did is there, up to the end.
        stream: Any = await client.xrange("gth:run:r1")
        assert stream[-1][0] == b"40-1"
        assert [fields[b"f"] for _, fields in stream[:-1]][-10:] == frames(31, 40)
    finally:
        await client.aclose()
        await here.close()


async def test_frames_the_local_journal_dropped_while_redis_was_away_are_a_gap_not_a_hang(
    own_redis: OwnRedis,
) -> None:
    url = own_redis.url
    here, there = RedisJournals(url), RedisJournals(url)
    client = aioredis.Redis.from_url(url)
    try:
        journal = here.open("r1", "t1", "alice")
        journal.max_bytes = 5 * len(framed(10))  # the local journal keeps the last 5 frames
        journal.append(data(1))
        await shipped(client, "r1", 1)
        own_redis.stop()
        for n in range(2, 31):
            journal.append(data(n))
        await asyncio.sleep(0.3)  # the shipper has failed at least once
        own_redis.start()
        journal.end()
        here.closed(journal)
        await eventually(lambda: ended(there, "r1"), timeout=60)
        with pytest.raises(JournalTrimmedError):
            await collect(there.follow("r1", 0))
        assert await collect(there.follow("r1", 27)) == frames(28, 30)
    finally:
        await client.aclose()
        await here.close()
        await there.close()


async def test_with_redis_away_runs_elsewhere_are_not_found_and_runs_here_are(
    own_redis: OwnRedis,
) -> None:
    here = RedisJournals(own_redis.url, close_timeout=1)
    try:
        journal = here.open("r1", "t1", "alice")
        own_redis.stop()
        assert await here.find("elsewhere") is None  # a new run can still start here
        assert await here.find("r1") == RunInfo("r1", "t1", "alice", ended=False)
        journal.end()
        here.closed(journal)
    finally:
        await here.close()


async def test_closing_while_redis_is_away_is_bounded(
    own_redis: OwnRedis,
) -> None:
    url = own_redis.url
    here = RedisJournals(url, close_timeout=1)
    journal = here.open("r1", "t1", "alice")
    journal.append(data(1))
    await asyncio.sleep(0.2)
    own_redis.stop()
    journal.append(data(2))
    await asyncio.wait_for(here.close(), 30)
    assert journal.after(0) == frames(1, 2)


def test_redis_journals_are_journals() -> None:
    journals: Journals = RedisJournals("redis://127.0.0.1:1/0")  # checked by mypy
    assert journals is not None  # nothing connects before it is used


def test_a_missing_redis_package_is_said_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ImportError, match=r"gth-jupyter\[redis\]"):
        RedisJournals("redis://127.0.0.1:1/0")


async def test_a_run_whose_local_frames_went_for_the_budget_is_read_from_redis(
    redis_url: str, client: aioredis.Redis
) -> None:
    here = RedisJournals(redis_url, user_budget_bytes=20_000)
    try:
        first = here.open("r1", "t1", "alice")
        for n in range(1, 101):
            first.append(data(n))
        first.end()
        here.closed(first)

        async def shipped_to_its_end() -> bool:
            return await client.hget("gth:run:r1:meta", "ended") == b"1"

        await eventually(shipped_to_its_end)
        second = here.open("r2", "t1", "alice")
        for n in range(1, 1001):  # alice's budget is full: r1's local frames go
            second.append(data(n))
        second.end()
        here.closed(second)
        assert first.dropped and first.after(100) == []
        assert await collect(here.follow("r1", 0)) == frames(1, 100)  # from Redis
    finally:
        await here.close()
