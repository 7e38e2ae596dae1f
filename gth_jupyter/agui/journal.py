"""Run journals: every SSE frame of a run, numbered, so a client that lost its connection can
come back (``Last-Event-ID``) and read what it missed, then follow the run live.

A run's frames are numbered from 1; the number is the frame's SSE ``id:``. The pump appends each
frame as it writes it (:meth:`RunJournal.append`: a list append, nothing more, on the token
path); followers wait for new frames and take them in batches. :class:`LocalJournals` keeps
journals in this process; ``journal_redis.RedisJournals`` also ships each run's frames to a
Redis Stream, so a client can re-attach through any server process sharing that Redis.

A journal is bounded (the oldest frames go first past :data:`MAX_JOURNAL_BYTES`) and kept for
:data:`RETAIN_SECONDS` after its run ends, then forgotten.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "MAX_JOURNAL_BYTES",
    "RETAIN_SECONDS",
    "JournalTrimmedError",
    "Journals",
    "LocalJournals",
    "RunInfo",
    "RunJournal",
]

#: The most a journal keeps of one run's frames; the oldest frames go first past it.
MAX_JOURNAL_BYTES = 16 * 1024 * 1024
#: How long a journal is kept after its run ends (a reload long after still finds the thread).
RETAIN_SECONDS = 600.0


class JournalTrimmedError(Exception):
    """The frames after the requested id are no longer kept (the run was too long, or it ended
    too long ago)."""


@dataclass(frozen=True)
class RunInfo:
    """What a host checks before re-attaching a client to a run."""

    run_id: str
    thread_id: str
    owner: str
    ended: bool


class RunJournal:
    """One run's frames, in order, each with its ``id:`` line."""

    def __init__(
        self, run_id: str, thread_id: str, owner: str, *, max_bytes: int = MAX_JOURNAL_BYTES
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self.owner = owner
        self.max_bytes = max_bytes
        self._frames: collections.deque[bytes] = collections.deque()
        self._first = 1  # the id of the oldest frame kept
        self._last = 0  # the id of the newest frame
        self._bytes = 0
        self._ended = False
        self._changed: asyncio.Future[None] | None = None

    @property
    def last_id(self) -> int:
        return self._last

    @property
    def first_id(self) -> int:
        """The id of the oldest frame kept."""
        return self._first

    @property
    def ended(self) -> bool:
        return self._ended

    def info(self) -> RunInfo:
        return RunInfo(self.run_id, self.thread_id, self.owner, self._ended)

    def append(self, frame: bytes) -> bytes:
        """Numbers ``frame`` (an SSE ``data:`` frame), keeps it, and returns it with its
        ``id:`` line."""
        self._last += 1
        framed = b"id: %d\n%s" % (self._last, frame)
        self._frames.append(framed)
        self._bytes += len(framed)
        while self._bytes > self.max_bytes and len(self._frames) > 1:
            self._bytes -= len(self._frames.popleft())
            self._first += 1
        changed = self._changed
        if changed is not None:
            self._changed = None
            if not changed.done():
                changed.set_result(None)
        return framed

    def end(self) -> None:
        """The run is over: followers get what is left, then stop."""
        self._ended = True
        changed, self._changed = self._changed, None
        if changed is not None and not changed.done():
            changed.set_result(None)

    def after(self, last_id: int) -> list[bytes]:
        """The frames after ``last_id``; :class:`JournalTrimmedError` when some of them are no
        longer kept."""
        if last_id >= self._last:
            return []
        if last_id + 1 < self._first:
            raise JournalTrimmedError(self.run_id)
        start = max(last_id + 1 - self._first, 0)
        if start == 0:
            return list(self._frames)
        # From the end when the follower is near the tip (the usual case): O(new frames).
        count = self._last - last_id
        if count <= len(self._frames) // 2:
            return list(itertools.islice(reversed(self._frames), count))[::-1]
        return list(itertools.islice(self._frames, start, None))

    async def wait(self, last_id: int) -> None:
        """Returns once there is a frame after ``last_id`` or the run has ended."""
        while last_id >= self._last and not self._ended:
            if self._changed is None:
                self._changed = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._changed)

    async def follow(self, last_id: int) -> AsyncIterator[list[bytes]]:
        """Batches of frames after ``last_id`` until the run ends (the first batch may be
        empty)."""
        while True:
            frames = self.after(last_id)
            last_id += len(frames)
            if frames:
                yield frames
            if self._ended and last_id >= self._last:
                return
            await self.wait(last_id)


class Journals(Protocol):
    """Where a host keeps its runs' journals, and finds a run to re-attach to."""

    def open(self, run_id: str, thread_id: str, owner: str) -> RunJournal:
        """A new journal for a run starting in this process."""
        ...

    def closed(self, journal: RunJournal) -> None:
        """``journal``'s run has ended (called once, after :meth:`RunJournal.end`)."""
        ...

    async def find(self, run_id: str) -> RunInfo | None:
        """The run, if a journal of it is kept here or (for a shared journal) anywhere."""
        ...

    def follow(self, run_id: str, last_id: int) -> AsyncIterator[list[bytes]]:
        """The run's frames after ``last_id``, in batches, until it ends;
        :class:`JournalTrimmedError` (before any batch) when they are no longer kept."""
        ...

    async def close(self) -> None: ...


class LocalJournals:
    """Journals kept in this process only."""

    def __init__(
        self, *, retain: float = RETAIN_SECONDS, max_bytes: int = MAX_JOURNAL_BYTES
    ) -> None:
        self.retain = retain
        self.max_bytes = max_bytes
        self._runs: dict[str, RunJournal] = {}
        self._expiry: dict[str, asyncio.TimerHandle] = {}

    def open(self, run_id: str, thread_id: str, owner: str) -> RunJournal:
        journal = RunJournal(run_id, thread_id, owner, max_bytes=self.max_bytes)
        self._runs[run_id] = journal
        return journal

    def closed(self, journal: RunJournal) -> None:
        if self._runs.get(journal.run_id) is not journal:
            return
        loop = asyncio.get_running_loop()
        self._expiry[journal.run_id] = loop.call_later(self.retain, self._forget, journal)

    def _forget(self, journal: RunJournal) -> None:
        self._expiry.pop(journal.run_id, None)
        if self._runs.get(journal.run_id) is journal:
            del self._runs[journal.run_id]

    def local(self, run_id: str) -> RunJournal | None:
        """The journal of a run of this process, if kept."""
        return self._runs.get(run_id)

    async def find(self, run_id: str) -> RunInfo | None:
        journal = self._runs.get(run_id)
        return journal.info() if journal is not None else None

    async def follow(self, run_id: str, last_id: int) -> AsyncIterator[list[bytes]]:
        journal = self._runs.get(run_id)
        if journal is None:
            raise JournalTrimmedError(run_id)
        journal.after(last_id)  # raises before anything is sent when the frames are gone
        async for frames in journal.follow(last_id):
            yield frames

    async def close(self) -> None:
        for handle in self._expiry.values():
            handle.cancel()
        self._expiry.clear()
        for journal in self._runs.values():
            with contextlib.suppress(Exception):
                journal.end()
        self._runs.clear()
