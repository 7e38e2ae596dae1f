"""Following a run shipped to Redis from another server process (see ``redis_shipper.py`` for
the keys): :class:`RedisFollower` finds a run by its meta hash and reads its stream (``XRANGE``,
then ``XREAD BLOCK``) up to the end marker. If nothing comes and the run's live key has gone (its
process died), it takes what is there and stops, as at the end of a run, and :meth:`find` reports
that run ended. A frame missing (trimmed, or never shipped) is
:class:`~.journal.JournalTrimmedError`, never a silent gap.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from .journal import JournalTrimmedError, RunInfo

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["BATCH", "BLOCK_SECONDS", "RedisFollower", "is_connection_error"]

log = logging.getLogger(__name__)

#: The longest one ``XREAD`` blocks before a follower checks that the run's process is alive.
BLOCK_SECONDS = 5.0
#: The most entries one round trip ships or reads (a long backlog goes in several).
BATCH = 1000


class RedisFollower:
    """Finds and follows runs in Redis: ``client`` makes the (shared) client on first use,
    ``keys`` names a run's stream, meta hash and live key, ``block_ms`` bounds one ``XREAD``."""

    def __init__(
        self,
        client: Callable[[], Redis],
        keys: Callable[[str], tuple[str, str, str]],
        block_ms: int,
    ) -> None:
        self._client = client
        self._keys = keys
        self._block_ms = block_ms
        self._find_failing = False  # logged once per outage

    async def find(self, run_id: str) -> RunInfo | None:
        """The run as its meta hash and live key say, or ``None`` (also when Redis cannot be
        reached: hosts ask before every new run)."""
        _, meta_key, live_key = self._keys(run_id)
        pipe = self._client().pipeline(transaction=False)
        pipe.hgetall(meta_key)
        pipe.exists(live_key)
        try:
            meta, live = await pipe.execute()
        except Exception as exc:
            if not is_connection_error(exc):
                raise
            # Hosts ask before every new run: Redis away must not stop runs from starting
            # here (a run id running elsewhere is still held off by its thread's lease).
            if not self._find_failing:
                self._find_failing = True
                log.warning("run journals: Redis unreachable, runs elsewhere not found: %r", exc)
            return None
        self._find_failing = False
        if not meta:
            return None
        ended = meta.get(b"ended") == b"1" or not live
        return RunInfo(
            run_id, meta.get(b"thread", b"").decode(), meta.get(b"owner", b"").decode(), ended
        )

    async def follow(self, run_id: str, last_id: int) -> AsyncIterator[list[bytes]]:
        redis = self._client()
        stream, meta, live = self._keys(run_id)
        if not await redis.exists(meta):
            raise JournalTrimmedError(run_id)
        reader = _StreamReader(run_id, last_id)
        catching_up = True
        while True:
            if catching_up:
                entries = _entries(await redis.xrange(stream, min=f"({reader.cursor}", count=BATCH))
                catching_up = len(entries) == BATCH
            else:
                entries = _entries_of(
                    await redis.xread({stream: reader.cursor}, count=BATCH, block=self._block_ms)
                )
            frames = reader.take(entries)
            if frames:
                yield frames
            if reader.ended:
                return
            if entries or catching_up:
                continue
            if await redis.exists(live):
                continue
            # Its process is gone: the end marker, if any, was written before the live key went.
            async for frames in self._rest(redis, stream, reader):
                yield frames
            return

    async def _rest(
        self, redis: Redis, stream: str, reader: _StreamReader
    ) -> AsyncIterator[list[bytes]]:
        while not reader.ended:
            entries = _entries(await redis.xrange(stream, min=f"({reader.cursor}", count=BATCH))
            frames = reader.take(entries)
            if frames:
                yield frames
            if len(entries) < BATCH:
                return


class _StreamReader:
    """Turns stream entries into frames, checking that none is missing."""

    def __init__(self, run_id: str, last_id: int) -> None:
        self.run_id = run_id
        self.last = last_id  # the id of the last frame taken
        self.cursor = f"{last_id}-0"  # the last entry id read
        self.ended = False

    def take(self, entries: Sequence[_Entry]) -> list[bytes]:
        frames: list[bytes] = []
        for entry_id, fields in entries:
            number, _, seq = entry_id.decode().partition("-")
            n = int(number)
            if seq == "0":
                if n != self.last + 1:
                    # Trimmed away (the stream's bound, or frames never shipped): the client
                    # cannot have every frame, so it must not get a silent gap.
                    raise JournalTrimmedError(self.run_id)
                frames.append(fields[b"f"])
                self.last = n
            elif n == self.last:
                self.ended = True
            else:
                raise JournalTrimmedError(self.run_id)
            self.cursor = entry_id.decode()
        return frames


_Entry = tuple[bytes, dict[bytes, bytes]]


def _entries(reply: Any) -> list[_Entry]:
    """The entries of an ``XRANGE``."""
    return list(reply or [])


def _entries_of(reply: Any) -> list[_Entry]:
    """The entries of an ``XREAD`` of one stream: ``[[name, entries]]`` (a dict in RESP3 when
    redis-py's legacy responses are off)."""
    if not reply:
        return []
    groups = reply.values() if isinstance(reply, dict) else (entries for _, entries in reply)
    return [entry for entries in groups for entry in entries]


def is_connection_error(exc: BaseException) -> bool:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return isinstance(exc, (RedisConnectionError, RedisTimeoutError, OSError))
