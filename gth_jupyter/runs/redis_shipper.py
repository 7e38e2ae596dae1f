"""Run journals shared through Redis, so a client can re-attach to a run from any server process.

A run started here keeps its local :class:`~.journal.RunJournal`: the pump's appends and this
process's followers never touch the network. A shipper task per run copies the run's frames to
Redis; the shippers' batches travel together, one pipelined round trip of one script call per
run, so two hundred runs' tokens cost about what one run's do. Per run:

- ``{prefix}run:{id}``, a stream: entry ``{n}-0`` (field ``f``) is the frame of SSE id ``n``;
  the end marker ``{last}-1`` (field ``end``: ``ended``, or ``left`` when this process closed
  mid-run) follows the last one. Bounded by ``MAXLEN ~ max_len``.
- ``{prefix}run:{id}:meta``, a hash {thread, owner, ended}: what :meth:`RedisJournals.find` reads.
- ``{prefix}run:{id}:live``: there while the run goes on in a live process (a TTL of ``live``
  seconds, renewed every ``live / 3``).

Every batch renews the stream's and the hash's TTL to ``retain``: they expire ``retain`` seconds
after the run ended, or after its process died. A run of another process is found and followed
by ``redis_follower.py``; a run of this one is read from its local journal.

Redis being unreachable never reaches a run: its shipper logs it once and retries, with a
backoff, for as long as this process keeps the run's local journal.

The hosts' ``prefix`` is ``gth:{<role>}:``, their owner's (``store/redis_users.py``), whose ACL
user may run only the commands this module sends (there: ``JOURNAL_COMMANDS``; keep both in
step) on those keys alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .journal import (
    BUDGET_BYTES,
    RETAIN_SECONDS,
    USER_BUDGET_BYTES,
    JournalTrimmedError,
    LocalJournals,
    RunInfo,
    RunJournal,
)
from .redis_follower import BATCH, BLOCK_SECONDS, RedisFollower, is_connection_error

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["LIVE_SECONDS", "MAX_STREAM_LEN", "RedisJournals"]

log = logging.getLogger(__name__)

#: Entries a run's stream keeps (about; Redis trims whole nodes). Most frames are tokens of a
#: hundred bytes or so: about the local journal's 16 MB.
MAX_STREAM_LEN = 100_000
#: How long a run outlives its process's last heartbeat, for followers elsewhere.
LIVE_SECONDS = 30.0
#: How long :meth:`RedisJournals.close` waits for the shippers' last batches.
CLOSE_SECONDS = 5.0
_BACKOFF_FIRST, _BACKOFF_MOST = 0.5, 5.0


@dataclass
class _Shipment:
    journal: RunJournal
    task: asyncio.Task[None] | None = None
    shipped: int = 0  # the id of the last frame in Redis
    refreshed: float = -math.inf  # when the meta, TTLs and live key were last written
    failing: bool = False  # an error was logged (once per run)
    done: bool = False


class RedisJournals:
    """Journals kept in this process and shipped to Redis Streams (see the module docstring).

    ``retain``: seconds a journal is kept after its run ended, here and in Redis. ``max_len``:
    the entries a run's stream keeps. ``live``: seconds without a heartbeat after which followers
    elsewhere take a run's process for gone. ``close_timeout``: the most :meth:`close` waits for
    the last batches. ``budget_bytes`` / ``user_budget_bytes``: the local journals' budgets
    (see :class:`~.journal.LocalJournals`). The client is made on first use, on the running
    loop."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "gth:",
        retain: float = RETAIN_SECONDS,
        max_len: int = MAX_STREAM_LEN,
        live: float = LIVE_SECONDS,
        close_timeout: float = CLOSE_SECONDS,
        budget_bytes: int = BUDGET_BYTES,
        user_budget_bytes: int = USER_BUDGET_BYTES,
    ) -> None:
        try:
            import redis.asyncio  # noqa: F401  (an optional extra: fail here, not mid-run)
        except ImportError as exc:
            raise ImportError(
                "Redis journals need the redis package: pip install 'gth-jupyter[redis]'"
            ) from exc
        self.url = url
        self.prefix = prefix
        self.retain = retain
        self.max_len = max_len
        self.live = live
        self.close_timeout = close_timeout
        self._heartbeat = live / 3
        self._block_ms = max(int(min(BLOCK_SECONDS, live) * 1000), 1)
        # The local journals' budgets: a run dropped from them is still shipped to its end.
        self._local = LocalJournals(
            retain=retain, budget_bytes=budget_bytes, user_budget_bytes=user_budget_bytes
        )
        self._shipments: dict[str, _Shipment] = {}
        self._redis: Redis | None = None
        self._commits = _GroupCommit(self._client)
        self._closing = False
        self._follower = RedisFollower(self._client, self._keys, self._block_ms)

    def _client(self) -> Redis:
        """The client, made on first use (on the running loop)."""
        if self._redis is None:
            from redis.asyncio import Redis
            from redis.asyncio.retry import Retry
            from redis.backoff import ExponentialBackoff

            self._redis = Redis.from_url(
                self.url,
                # Each blocked follower holds a connection (the shippers share one).
                max_connections=4096,
                socket_connect_timeout=5.0,
                socket_timeout=self._block_ms / 1000 + 10.0,
                # The shipper retries on its own, with a longer backoff.
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2),
            )
        return self._redis

    def _keys(self, run_id: str) -> tuple[str, str, str]:
        stream = f"{self.prefix}run:{run_id}"
        return stream, f"{stream}:meta", f"{stream}:live"

    # -- the Journals protocol -------------------------------------------------------------

    def open(self, run_id: str, thread_id: str, owner: str) -> RunJournal:
        journal = self._local.open(run_id, thread_id, owner)
        shipment = _Shipment(journal)
        shipment.task = asyncio.get_running_loop().create_task(
            self._ship(shipment), name=f"gth-journal-ship-{run_id}"
        )
        self._shipments[run_id] = shipment
        return journal

    def closed(self, journal: RunJournal) -> None:
        # The shipper sees the end by itself; this only starts the local retention.
        self._local.closed(journal)

    def local(self, run_id: str) -> RunJournal | None:
        """The journal of a run of this process, if kept."""
        return self._local.local(run_id)

    async def find(self, run_id: str) -> RunInfo | None:
        journal = self._local.local(run_id)
        if journal is not None:
            return journal.info()
        return await self._follower.find(run_id)

    async def follow(self, run_id: str, last_id: int) -> AsyncIterator[list[bytes]]:
        journal = self._local.local(run_id)
        # A run whose local frames went for the budget is read from Redis, which has them.
        if journal is not None and not journal.dropped:
            async for frames in self._local.follow(run_id, last_id):
                yield frames
            return
        async for frames in self._follower.follow(run_id, last_id):
            yield frames

    async def close(self) -> None:
        """Stops the shippers, gives their last batches up to ``close_timeout`` seconds (a run
        still going is left for followers elsewhere to see its process gone), and closes the
        client."""
        self._closing = True
        shipments = [s for s in self._shipments.values() if not s.done]
        for shipment in shipments:
            if shipment.task is not None:
                shipment.task.cancel()
        await asyncio.gather(*(s.task for s in shipments if s.task), return_exceptions=True)
        shipments = [s for s in shipments if not s.done]
        if shipments and self._redis is not None:
            flushes = asyncio.gather(*(self._flush(s) for s in shipments), return_exceptions=True)
            try:
                results = await asyncio.wait_for(flushes, self.close_timeout)
            except asyncio.TimeoutError as exc:
                results = [exc]
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:  # Redis down at exit: what was not shipped is lost
                log.warning(
                    "run journals: %d run(s) not flushed to Redis: %r", len(errors), errors[0]
                )
        self._commits.cancel()
        self._shipments.clear()
        await self._local.close()
        if self._redis is not None:
            redis, self._redis = self._redis, None
            await redis.aclose()

    # -- shipping ----------------------------------------------------------------------------

    async def _ship(self, shipment: _Shipment) -> None:
        """Copies a run's frames to Redis until its end is there; errors are retried, never
        raised. Cancelled by :meth:`close`, which flushes the rest itself."""
        journal = shipment.journal
        backoff = _BACKOFF_FIRST
        # Gives up once this process forgets the run (``retain`` after it ended).
        while self._local.local(journal.run_id) is journal:
            try:
                if await self._ship_batch(shipment, closing=False):
                    break
            except Exception as exc:
                if self._closing:
                    # redis-py can turn the cancellation of a connect into a ConnectionError.
                    raise asyncio.CancelledError from exc
                if not shipment.failing:
                    shipment.failing = True
                    log.warning(
                        "run %s: frames not shipped to Redis yet (retrying): %r",
                        journal.run_id,
                        exc,
                        exc_info=not is_connection_error(exc),
                    )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MOST)
                continue
            backoff = _BACKOFF_FIRST
            if journal.last_id > shipment.shipped:
                continue  # more came during the round trip: ship it now
            with contextlib.suppress(asyncio.TimeoutError):
                # wait() shields its future, so the timeout cancels nothing of the journal's.
                await asyncio.wait_for(journal.wait(shipment.shipped), self._heartbeat)
        shipment.done = True
        if self._shipments.get(journal.run_id) is shipment:
            del self._shipments[journal.run_id]

    async def _flush(self, shipment: _Shipment) -> None:
        """At close: what the shipper had not shipped yet, then the run's end or departure."""
        while not await self._ship_batch(shipment, closing=True):
            pass

    async def _ship_batch(self, shipment: _Shipment, *, closing: bool) -> bool:
        """Ships the next frames (or, every ``live / 3`` seconds, only renews the run's TTLs and
        live key). True once the run's end (or, ``closing``, this process's departure) is in
        Redis."""
        journal = shipment.journal
        # Read before the frames: once ended, the frames read next are the last ones.
        ended = journal.ended
        try:
            frames = journal.after(shipment.shipped)
        except JournalTrimmedError:
            # Redis was unreachable for longer than the local journal holds: skip what is gone
            # (a follower elsewhere sees the gap as trimmed frames).
            shipment.shipped = _kept_from(journal, shipment.shipped)
            frames = journal.after(shipment.shipped)
        frames = frames[:BATCH]
        last = shipment.shipped + len(frames)
        finishing = last >= journal.last_id and (ended or closing)
        now = time.monotonic()
        if not frames and not finishing and now - shipment.refreshed < self._heartbeat:
            return False
        state = b"running" if not finishing else b"ended" if ended else b"left"
        await self._commits.call(
            self._keys(journal.run_id),
            [
                shipment.shipped,
                self.max_len,
                max(int(self.retain * 1000), 1),
                max(int(self.live * 1000), 1),
                state,
                journal.thread_id,
                journal.owner,
                *frames,
            ],
        )
        shipment.shipped = last
        shipment.refreshed = now
        if shipment.failing:
            shipment.failing = False
            log.info("run %s: shipping frames to Redis again", journal.run_id)
        return finishing


# One run's batch: its frames (ids after ARGV[1]) as stream entries, then its meta hash, TTLs
# and live key. States "ended" (the run's end) and "left" (its process closed mid-run) add the
# end marker and delete the live key. An entry already there (a retried round trip that had
# reached Redis) is skipped.
_SHIP = """
local shipped = tonumber(ARGV[1])
for i = 8, #ARGV do
  local added = redis.pcall('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2],
    string.format('%d-0', shipped + i - 7), 'f', ARGV[i])
  if type(added) == 'table' and added.err
    and not string.find(added.err, 'equal or smaller', 1, true) then
    return added
  end
end
local state = ARGV[5]
if state ~= 'running' then
  redis.pcall('XADD', KEYS[1], string.format('%d-1', shipped + #ARGV - 7), 'end', state)
end
redis.call('HSET', KEYS[2], 'thread', ARGV[6], 'owner', ARGV[7],
  'ended', state == 'ended' and '1' or '0')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if state == 'running' then
  redis.call('SET', KEYS[3], '1', 'PX', ARGV[4])
else
  redis.call('DEL', KEYS[3])
end
return 1
"""


_Call = tuple[Sequence[str], Sequence[Any], "asyncio.Future[None]"]


class _GroupCommit:
    """Runs the shippers' batches together: whatever is asked while a round trip is under way
    goes in the next one, one pipeline of one script call per run. The client's cost is mostly
    per round trip and per command, so many runs' tokens cost about what one run's do."""

    def __init__(self, client: Callable[[], Redis]) -> None:
        self._client = client
        self._sha: str | None = None
        self._waiting: list[_Call] = []
        self._flying: list[_Call] = []  # the batch of the round trip under way
        self._task: asyncio.Task[None] | None = None

    async def call(self, keys: Sequence[str], args: Sequence[Any]) -> None:
        future = asyncio.get_running_loop().create_future()
        self._waiting.append((keys, args, future))
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="gth-journal-ship")
        await future

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
        for _, _, future in self._waiting + self._flying:
            future.cancel()
        self._waiting.clear()

    async def _run(self) -> None:
        while self._waiting:
            batch = self._flying = self._waiting
            self._waiting = []
            try:
                results = await self._execute(batch)
            except Exception as exc:
                results = [exc] * len(batch)
            for (_, _, future), result in zip(batch, results, strict=True):
                if future.done():
                    continue  # its shipper was cancelled (close)
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(None)

    async def _execute(self, batch: list[_Call]) -> list[Any]:
        from redis.exceptions import NoScriptError

        redis = self._client()
        for attempt in range(2):
            if self._sha is None:
                self._sha = await redis.script_load(_SHIP)
            pipe = redis.pipeline(transaction=False)
            for keys, args, _ in batch:
                pipe.evalsha(self._sha, len(keys), *keys, *args)
            results: list[Any] = await pipe.execute(raise_on_error=False)
            if attempt or not any(isinstance(r, NoScriptError) for r in results):
                return results
            self._sha = None  # Redis restarted (or flushed its scripts): load it again
        raise AssertionError("unreachable")


def _kept_from(journal: RunJournal, trimmed: int) -> int:
    """The smallest id ``after()`` still answers for, above ``trimmed`` (which it no longer
    does): the journal's oldest kept frame, less one."""
    low, high = trimmed, journal.last_id  # after(low) raises, after(high) does not
    while high - low > 1:
        middle = (low + high) // 2
        try:
            journal.after(middle)
        except JournalTrimmedError:
            low = middle
        else:
            high = middle
    return high
