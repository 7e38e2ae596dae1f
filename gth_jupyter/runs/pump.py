"""Pumping one run to a client as SSE bytes: the same code for HTTP and for the widget's comm.

A transport supplies ``write`` (buffer bytes) and ``flush`` (send them); the pump streams the
run's AG-UI events through :class:`~gth_jupyter.runs.sse.SSEWriter` (coalesced token frames,
keep-alives) and, however the run ends, closes the event stream (which lets the run's thread
go: see :class:`~gth_jupyter.agui.ThreadRun`).

Over HTTP every frame also goes into the run's journal (numbered: its SSE ``id:``), so a client
that lost the stream can re-attach; a run that asked to be ``detach``-ed goes on into the
journal when its client leaves (:meth:`SSEPump.detach`), and ends as it would have.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable

from ag_ui.core import BaseEvent, RunErrorEvent

from .journal import RunJournal
from .sse import SSEWriter

__all__ = ["SSEPump"]


class SSEPump:
    """One run's ``events`` streamed into one transport (and its journal)."""

    def __init__(
        self,
        events: AsyncGenerator[BaseEvent, None],
        write: Callable[[bytes], None],
        flush: Callable[[], Awaitable[None]],
        *,
        window: float = 0.010,
        journal: RunJournal | None = None,
        detachable: bool = False,
    ) -> None:
        self.events = events
        self.writer = SSEWriter(write, flush, window=window, journal=journal, detachable=detachable)
        self._flush = flush
        self._task: asyncio.Task[None] | None = None
        self.stopped = False

    def stop(self) -> None:
        """Stops the run on request (``DELETE gth/runs/{id}``): it ends with ``RUN_ERROR``
        (code ``run_cancelled``) for whoever follows it."""
        self.stopped = True
        if self._task is not None:
            self._task.cancel()

    def detach(self) -> None:
        """The client went away: the run goes on into the journal alone."""
        self.writer.detach()

    async def run(self) -> None:
        """Streams the run; a cancelled pump still sends what it wrote."""
        self._task = asyncio.current_task()
        events = self.events
        writer = self.writer
        try:
            async with writer:
                put, flush = writer.put, writer.flush
                async for event in events:
                    if put(event):  # else it goes out with the window's flush
                        await flush()
                await flush()
        except asyncio.CancelledError:
            if self.stopped:
                with contextlib.suppress(Exception):  # the peer may be gone already
                    stopped = RunErrorEvent(message="The run was stopped.", code="run_cancelled")
                    await writer.send(stopped)
            if not writer.detached:
                with contextlib.suppress(Exception):  # the peer may be gone already
                    writer.hand_over()
                    await self._flush()
            raise
        finally:
            await events.aclose()
            if writer.journal is not None:
                writer.journal.end()
