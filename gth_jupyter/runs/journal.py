"""Run journals: every SSE frame of a run, numbered, so a client that lost its connection can
come back (``Last-Event-ID``) and read what it missed, then follow the run live.

A run's frames are numbered from 1; the number is the frame's SSE ``id:``. The pump appends each
frame as it writes it (:meth:`RunJournal.append`: a list append, nothing more, on the token
path); followers wait for new frames and take them in batches. :class:`LocalJournals` keeps
journals in this process; ``redis_shipper.RedisJournals`` also ships each run's frames to a
Redis Stream, so a client can re-attach through any server process sharing that Redis.

A journal is bounded (the oldest frames go first past :data:`MAX_JOURNAL_BYTES`) and kept for
:data:`RETAIN_SECONDS` after its run ends, then forgotten. All of a process's journals share a
budget (:data:`BUDGET_BYTES`), and each user's journals one of their own
(:data:`USER_BUDGET_BYTES`): past either, the oldest finished runs lose their frames first (a
client re-attaching to one is told its events expired); a run still going keeps its own. A
large frame equal to an earlier one of its run (the final ``STATE_SNAPSHOT`` of a run that did
not change the client's state echoes the first) is kept once.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, cast

__all__ = [
    "BUDGET_BYTES",
    "MAX_JOURNAL_BYTES",
    "RETAIN_SECONDS",
    "USER_BUDGET_BYTES",
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
#: The most all of a process's journals keep (``journal_budget_bytes``).
BUDGET_BYTES = 64 * 1024 * 1024
#: The most one user's journals keep (``journal_user_budget_bytes``).
USER_BUDGET_BYTES = 16 * 1024 * 1024
#: Frames at least this large are kept apart from their ``id:`` line, so that an equal later
#: one shares their bytes.
SHARED_FRAME_BYTES = 64 * 1024
#: How many earlier large frames of a run a new one is compared with.
_SHARED_LOOKBACK = 4


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


class _Large:
    """A large frame: its ``id:`` line and its payload, which an equal later frame shares."""

    __slots__ = ("charged", "head", "payload")

    def __init__(self, head: bytes, payload: bytes, charged: int) -> None:
        self.head = head
        self.payload = payload
        self.charged = charged  # the payload's bytes, counted on the first frame holding it

    def framed(self) -> bytes:
        return self.head + self.payload


class RunJournal:
    """One run's frames, in order, each with its ``id:`` line."""

    def __init__(
        self, run_id: str, thread_id: str, owner: str, *, max_bytes: int = MAX_JOURNAL_BYTES
    ) -> None:
        self.run_id = run_id
        self.thread_id = thread_id
        self.owner = owner
        self.max_bytes = max_bytes
        self._frames: collections.deque[bytes | _Large] = collections.deque()
        self._large: collections.deque[_Large] = collections.deque()  # those of _frames
        self._first = 1  # the id of the oldest frame kept
        self._last = 0  # the id of the newest frame
        self._bytes = 0
        self._ended = False
        self._changed: asyncio.Future[None] | None = None
        #: Its frames were let go for the journals' budget (see :meth:`drop`).
        self.dropped = False

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

    @property
    def size(self) -> int:
        """The bytes its frames hold (a payload shared by two frames counted once)."""
        return self._bytes

    def info(self) -> RunInfo:
        return RunInfo(self.run_id, self.thread_id, self.owner, self._ended)

    def append(self, frame: bytes) -> bytes:
        """Numbers ``frame`` (an SSE ``data:`` frame), keeps it, and returns it with its
        ``id:`` line."""
        self._last += 1
        if len(frame) < SHARED_FRAME_BYTES:
            framed = b"id: %d\n%s" % (self._last, frame)
            self._frames.append(framed)
            self._bytes += len(framed)
        else:
            framed = self._append_large(frame)
        while self._bytes > self.max_bytes and len(self._frames) > 1:
            self._pop_oldest()
        changed = self._changed
        if changed is not None:
            self._changed = None
            if not changed.done():
                changed.set_result(None)
        return framed

    def _append_large(self, frame: bytes) -> bytes:
        head = b"id: %d\n" % self._last
        payload, charged = frame, len(frame)
        for _, earlier in zip(range(_SHARED_LOOKBACK), reversed(self._large), strict=False):
            if len(earlier.payload) == len(frame) and earlier.payload == frame:
                payload, charged = earlier.payload, 0  # kept once, counted once
                break
        entry = _Large(head, payload, charged)
        self._frames.append(entry)
        self._large.append(entry)
        self._bytes += len(head) + charged
        return head + frame

    def _pop_oldest(self) -> None:
        oldest = self._frames.popleft()
        self._first += 1
        if type(oldest) is bytes:
            self._bytes -= len(oldest)
            return
        assert isinstance(oldest, _Large)
        self._large.popleft()
        self._bytes -= len(oldest.head)
        if oldest.charged:
            # A later frame sharing the payload now holds it, and is counted for it.
            heir = next((e for e in self._large if e.payload is oldest.payload), None)
            if heir is not None:
                heir.charged = oldest.charged
            else:
                self._bytes -= oldest.charged

    def drop(self) -> None:
        """Lets go of every frame (the journals' budget needs the memory): the run is still
        known, and a follower asking for its frames is told they are no longer kept."""
        self._frames.clear()
        self._large.clear()
        self._bytes = 0
        self._first = self._last + 1
        self.dropped = True

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
        found: list[bytes | _Large]
        if start == 0:
            found = list(self._frames)
        else:
            # From the end when the follower is near the tip (the usual case): O(new frames).
            count = self._last - last_id
            if count <= len(self._frames) // 2:
                found = list(itertools.islice(reversed(self._frames), count))[::-1]
            else:
                found = list(itertools.islice(self._frames, start, None))
        if not self._large:
            return cast("list[bytes]", found)  # no large frame kept: bytes only
        return [f.framed() if isinstance(f, _Large) else f for f in found]

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
    """Journals kept in this process only, within a byte budget for the process
    (``budget_bytes``) and one for each user (``user_budget_bytes``): past either, the oldest
    finished runs lose their frames first (see :meth:`RunJournal.drop`). One run keeps at most
    the smallest of ``max_bytes`` and the budgets."""

    def __init__(
        self,
        *,
        retain: float = RETAIN_SECONDS,
        max_bytes: int = MAX_JOURNAL_BYTES,
        budget_bytes: int = BUDGET_BYTES,
        user_budget_bytes: int = USER_BUDGET_BYTES,
    ) -> None:
        self.retain = retain
        self.max_bytes = min(max_bytes, budget_bytes, user_budget_bytes)
        self.budget_bytes = budget_bytes
        self.user_budget_bytes = user_budget_bytes
        self._runs: dict[str, RunJournal] = {}
        self._expiry: dict[str, asyncio.TimerHandle] = {}
        #: Finished runs that still hold frames, the first finished first.
        self._finished: dict[str, RunJournal] = {}

    def open(self, run_id: str, thread_id: str, owner: str) -> RunJournal:
        journal = RunJournal(run_id, thread_id, owner, max_bytes=self.max_bytes)
        replaced = self._runs.get(run_id)
        if replaced is not None:
            self._finished.pop(run_id, None)
        self._runs[run_id] = journal
        self._keep_within_budget(owner)
        return journal

    def closed(self, journal: RunJournal) -> None:
        if self._runs.get(journal.run_id) is not journal:
            return
        loop = asyncio.get_running_loop()
        self._expiry[journal.run_id] = loop.call_later(self.retain, self._forget, journal)
        self._finished[journal.run_id] = journal
        self._keep_within_budget(journal.owner)

    def _keep_within_budget(self, owner: str) -> None:
        """Drops the frames of the oldest finished runs while the process's journals, or
        ``owner``'s, hold more than their budget."""
        if not self._finished:
            return
        total = mine = 0
        for journal in self._runs.values():
            total += journal.size
            if journal.owner == owner:
                mine += journal.size
        if total <= self.budget_bytes and mine <= self.user_budget_bytes:
            return
        for run_id, journal in list(self._finished.items()):
            if total <= self.budget_bytes and mine <= self.user_budget_bytes:
                break
            if total <= self.budget_bytes and journal.owner != owner:
                continue  # only the user's own budget is exceeded: their runs go
            size = journal.size
            journal.drop()
            del self._finished[run_id]
            total -= size
            if journal.owner == owner:
                mine -= size

    def _forget(self, journal: RunJournal) -> None:
        self._expiry.pop(journal.run_id, None)
        if self._runs.get(journal.run_id) is journal:
            del self._runs[journal.run_id]
            self._finished.pop(journal.run_id, None)

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
        self._finished.clear()
