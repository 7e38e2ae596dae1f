"""The run service: every run a host process starts, however its client reaches it.

One :class:`RunService` per host process (the Jupyter extension, the standalone server, the
kernel's comm transport and headless turns; a ``Session`` keeps its own) owns the runs' journals
and the runs streaming here:

- :meth:`RunService.start` is the one way a run starts, for every host: it plans the run (agui's
  :class:`~gth_jupyter.agui.ThreadRun`, which holds the thread from its claim to the end of its
  stream and is the one place it is let go), waits out a busy thread where the host asks it to,
  then streams the run into a :class:`Transport` (SSE bytes; into its journal too when it has a
  run key, numbered frames: their SSE ``id:``) or to a reader in this process (the run
  contract's items). A journaled run that asked to be detached goes on when its client leaves
  (:meth:`RunService.leave`);
- :meth:`RunService.follow` re-attaches a client to a kept run after its ``Last-Event-ID``, and
  the :class:`Relay` it answers streams it live, with keep-alives while the run is quiet;
- :meth:`RunService.cancel` stops a run streaming here; one streaming in another server process
  (a shared Redis journal) is ``409 run_elsewhere``.

Every refusal is a ``ProtocolError`` raised before any byte of the stream. Which kernel a run's
kernel tools work in is the host's to decide (and refuse) before it starts the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from ..agui.errors import (
    ProtocolError,
    events_expired,
    journal_unavailable,
    run_elsewhere,
    run_not_found,
)
from ..agui.run import ThreadRun
from ..contract.run import RunEnd, StreamItem
from .journal import Journals, JournalTrimmedError, LocalJournals, RunInfo
from .pump import SSEPump
from .sse import KEEPALIVE_FRAME

if TYPE_CHECKING:
    import ag_ui.core as agui

    from ..agent.runtime import Runtime
    from ..agui.owners import Requester
    from ..agui.request import RunRequest
    from ..contract.kernel import KernelAccess

__all__ = [
    "KEEPALIVE_SECONDS",
    "MAX_RUN_ID",
    "Consume",
    "Relay",
    "Retry",
    "RunService",
    "Running",
    "Transport",
]

log = logging.getLogger(__name__)

#: How often a re-attached client that waits on a quiet run gets a keep-alive comment.
KEEPALIVE_SECONDS = 15.0
#: The longest run id looked up (what ``RunAgentInput`` accepts).
MAX_RUN_ID = 512

Write = Callable[[bytes], None]
Flush = Callable[[], Awaitable[None]]
#: A reader of a run in this process (a ``Session``, a headless turn): each stream item in
#: turn, then the ``RunEnd``.
Consume = Callable[[StreamItem | RunEnd], None]
#: Asked when the thread is busy with another run (``run_busy``): waits, then answers whether
#: to try again.
Retry = Callable[[], Awaitable[bool]]


def _opened() -> None:
    pass


@dataclass
class Transport:
    """Where a run's SSE bytes go: ``write`` buffers them, ``flush`` sends them."""

    write: Write
    flush: Flush
    #: Called once the run is planned, before its first byte (an HTTP answer's status line).
    opened: Callable[[], None] = _opened
    #: How long token frames wait to go out together (see ``sse.py``).
    window: float = 0.010
    #: The run's key in the journals (``agui.owners.scoped_id``), for a client that may
    #: re-attach: the run is journaled for ``owner`` and can be left and cancelled. ``None``: a
    #: transport whose client cannot re-attach (the widget's comm).
    run_key: str | None = None
    owner: str = ""


@dataclass
class Running:
    """A run streaming in this process: whose it is, its pump, and the task pumping it."""

    owner: str
    pump: SSEPump
    task: asyncio.Future[None]


class RunService:
    """The runs of one host process (see the module docstring); ``journals`` keep their frames
    (default: in this process)."""

    def __init__(self, journals: Journals | None = None) -> None:
        self.journals: Journals = journals if journals is not None else LocalJournals()
        #: The runs streaming here, by run key (``agui.owners.scoped_id``).
        self.running: dict[str, Running] = {}

    async def find(self, run_key: str, run_id: str) -> RunInfo | None:
        """The kept run ``run_key`` (``run_id`` as its client names it), or ``None``."""
        return await self.journals.find(run_key) if len(run_id) <= MAX_RUN_ID else None

    @overload
    async def start(
        self,
        runtime: Runtime,
        request: RunRequest | agui.RunAgentInput,
        to: Transport,
        *,
        kernel: KernelAccess | None = None,
        requester: Requester | None = None,
        protocol: str = "auto",
        retry: Retry | None = None,
    ) -> SSEPump: ...

    @overload
    async def start(
        self,
        runtime: Runtime,
        request: RunRequest | agui.RunAgentInput,
        to: Consume,
        *,
        kernel: KernelAccess | None = None,
        requester: Requester | None = None,
        protocol: str = "auto",
        retry: Retry | None = None,
    ) -> None: ...

    async def start(
        self,
        runtime: Runtime,
        request: RunRequest | agui.RunAgentInput,
        to: Transport | Consume,
        *,
        kernel: KernelAccess | None = None,
        requester: Requester | None = None,
        protocol: str = "auto",
        retry: Retry | None = None,
    ) -> SSEPump | None:
        """Runs ``request`` on ``runtime`` to its end, streamed ``to`` a transport (answers its
        pump) or a reader in this process.

        Planned first (see :class:`~gth_jupyter.agui.ThreadRun` for ``kernel``, ``protocol``
        and ``requester``): a refusal is the ``ProtocolError`` raised before anything is
        streamed (nor ``opened``). A busy thread is ``409 run_busy`` at once, unless ``retry``
        says to try again. However the run ends, its thread is free again once its stream has
        ended (a journaled run's client may leave without ending it: see :meth:`leave`)."""
        run = await self._plan(runtime, request, kernel, requester, protocol, retry)
        try:
            if not isinstance(to, Transport):
                async for item in run.items():
                    to(item)
                return None
            to.opened()
            if to.run_key is None:
                pump = SSEPump(run.events(), to.write, to.flush, window=to.window)
                await pump.run()  # a cancelled pump still sends what it wrote
                return pump
            return await self._journaled(run, to, to.run_key)
        finally:
            await run.aclose()

    async def _plan(
        self,
        runtime: Runtime,
        request: RunRequest | agui.RunAgentInput,
        kernel: KernelAccess | None,
        requester: Requester | None,
        protocol: str,
        retry: Retry | None,
    ) -> ThreadRun:
        """The run, planned; a new one for each try while the thread is busy and ``retry``
        says to wait."""
        while True:
            run = ThreadRun(runtime, request, kernel=kernel, protocol=protocol, requester=requester)
            try:
                await run.plan()
            except ProtocolError as refusal:
                if refusal.code != "run_busy" or retry is None or not await retry():
                    raise
                continue
            return run

    async def _journaled(self, run: ThreadRun, to: Transport, run_key: str) -> SSEPump:
        """Streams ``run`` into the transport and its journal until it ends (or its client
        leaves a run that is not detachable); a run that asked to be detached
        (``forwardedProps.detach``) may go on without its client."""
        journals = self.journals
        journal = journals.open(run_key, run.request.input.thread_id, to.owner)
        pump = SSEPump(
            run.events(),
            to.write,
            to.flush,
            window=to.window,
            journal=journal,
            detachable=run.request.detach,
        )
        task = asyncio.ensure_future(pump.run())
        self.running[run_key] = Running(to.owner, pump, task)
        try:
            await asyncio.wait({task})
        finally:
            self.running.pop(run_key, None)
            journal.end()
            journals.closed(journal)
        if not task.cancelled() and task.exception() is not None:
            log.warning("AG-UI stream ended early: %s", task.exception())
        return pump

    def leave(self, run_key: str) -> None:
        """The client of run ``run_key`` went away: a detachable run goes on, into its journal
        alone; any other is cancelled (the thread keeps its last checkpoint)."""
        running = self.running.get(run_key)
        if running is None:
            return
        if running.pump.writer.detachable:
            running.pump.detach()
        elif not running.task.done():
            running.task.cancel()

    async def cancel(self, owner: str, run_key: str, run_id: str) -> None:
        """Stops ``owner``'s run, or finds it ended already; ``404 run_not_found`` for an
        unknown run (another user's run of that id is not theirs), ``409 run_elsewhere`` for a
        run another server process streams."""
        here = self.running.get(run_key)
        if here is not None and here.owner == owner:
            here.pump.stop()
            return
        known = await self.find(run_key, run_id)
        if here is not None or known is None or known.owner != owner:
            raise run_not_found(run_id)
        if not known.ended:
            raise run_elsewhere(run_id)

    async def follow(self, run_key: str, run_id: str, last_id: int) -> Relay:
        """The kept run's frames after ``last_id``, ready to relay; raises a ``ProtocolError``
        (before any byte) when they are no longer kept, or the journal cannot be read."""
        frames = self.journals.follow(run_key, last_id).__aiter__()
        try:
            first = await frames.__anext__()
        except StopAsyncIteration:
            first = []
        except JournalTrimmedError:
            raise events_expired(run_id) from None
        except Exception as exc:  # the shared journal (Redis) cannot be reached
            log.warning("Run %s: its journal could not be read: %s", run_id, exc)
            raise journal_unavailable(run_id) from None
        return Relay(run_id, first, frames)

    async def close(self) -> None:
        """Closes the journals (the shared ones flush what they still hold)."""
        await self.journals.close()


class Relay:
    """A re-attached client's frames: the first batch (already read), then the rest live."""

    def __init__(self, run_id: str, first: list[bytes], frames: AsyncIterator[list[bytes]]):
        self.run_id = run_id
        self._first = first
        self._frames = frames

    async def run(self, write: Write, flush: Flush) -> None:
        """Writes batches of frames as they come, with a keep-alive while the run is quiet."""
        frames: Any = self._frames
        pending: asyncio.Future[list[bytes]] | None = None
        try:
            if self._first:
                write(b"".join(self._first))
            await flush()
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(frames.__anext__())
                done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_SECONDS)
                if not done:
                    write(KEEPALIVE_FRAME)
                    await flush()
                    continue
                got, pending = pending, None
                try:
                    batch = got.result()
                except StopAsyncIteration:
                    return
                write(b"".join(batch))
                await flush()
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.wait({pending})
            with contextlib.suppress(Exception):
                await frames.aclose()
