"""The run routes: start a run and stream it, re-attach to one (``Last-Event-ID``), stop one.

A run's frames go to its client and into the host's journal (numbered: their SSE ``id:``); a
run that asked to be detached goes on when its client leaves. ``GET gth/runs/{id}/events`` and a
``POST`` of a ``runId`` already known replay the journal after the client's last id and then
follow the run live.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from tornado.iostream import StreamClosedError

from ..agui import (
    JournalTrimmedError,
    ProtocolError,
    SSEPump,
    detached,
    kernel_id,
    parse_input,
    plan_run,
    runtime_of,
)
from ..agui.errors import (
    events_expired,
    invalid_input,
    journal_unavailable,
    kernel_forbidden,
    kernel_not_found,
    run_exists,
    run_not_found,
)
from ..agui.owners import scoped_id
from ..agui.sse import KEEPALIVE_FRAME, MEDIA_TYPE
from ..contract.kernel import KernelAccess
from .base import BaseRoutes

__all__ = ["KERNELS_KEY", "MAX_RUN_ID", "RUNNING_KEY", "RunRoutes"]

log = logging.getLogger(__name__)

#: The host's :class:`~gth_jupyter.kernel.KernelPool` (absent: a host without kernels).
KERNELS_KEY = "gth_kernels"
#: The runs streaming in this process: run key (``agui.owners.scoped_id``) -> (owner, its pump).
RUNNING_KEY = "gth_running"
#: How often a re-attached client that waits on a quiet run gets a keep-alive comment.
KEEPALIVE_SECONDS = 15.0
#: The largest ``Last-Event-ID`` accepted (JavaScript's safe integers).
MAX_EVENT_ID = 2**53
#: The longest run id a route looks up (what ``RunAgentInput`` accepts).
MAX_RUN_ID = 512


class RunRoutes(BaseRoutes):
    """Starting, following and stopping runs."""

    _stream_task: asyncio.Future[None] | None = None
    _pump: SSEPump | None = None

    async def run_agent(self, name: str) -> None:
        """Runs agent ``name`` on the request body and streams the run as SSE. A ``runId`` that
        is already running (or ran lately) re-attaches to it instead of starting it again."""
        self.note_oauth_redirect()
        who = self.requester()
        try:
            runtime = await runtime_of(self.registry, name, who.name)
            request = parse_input(self.body, self.max_body_bytes)
            # Runs are kept by the requester's own id (another user's equal id is another run).
            run_key = scoped_id(who, request.run_id)
            known = await self.journals.find(run_key)
            if known is not None:
                if known.owner != who.name or known.thread_id != request.thread_id:
                    raise run_exists(request.run_id)
                await self.follow_run(run_key, request.run_id)
                return
            kernel = await self.kernel_for(kernel_id(request))
            prepared = await plan_run(
                runtime,
                request,
                kernel=kernel,
                protocol=self.registry.effective.agui.protocol or "auto",
                requester=who,
            )
        except ProtocolError as error:
            self.send_refusal(error)
            return
        self.start_stream()
        journals = self.journals
        journal = journals.open(run_key, request.thread_id, who.name)
        pump = SSEPump(
            prepared, self.write, self.flush, journal=journal, detachable=detached(request)
        )
        self._pump = pump
        task = asyncio.ensure_future(pump.run())
        self._stream_task = task
        running = self.running_runs
        running[run_key] = (who.name, pump)
        try:
            await asyncio.wait({task})
        finally:
            running.pop(run_key, None)
            journal.end()
            journals.closed(journal)
            # The pump holds this handler's ``write`` and the run (its request, its state):
            # without this cycle the run is freed now, not at the next full collection.
            self._pump = None
            self._stream_task = None
        if not task.cancelled() and task.exception() is not None:
            log.warning("AG-UI stream ended early: %s", task.exception())
        if not self._finished and not pump.writer.detached:
            with contextlib.suppress(StreamClosedError):
                self.finish()

    @property
    def running_runs(self) -> dict[str, tuple[str, SSEPump]]:
        runs: dict[str, tuple[str, SSEPump]] = self.settings.setdefault(RUNNING_KEY, {})
        return runs

    async def cancel_run(self, run_id: str) -> None:
        """``DELETE gth/runs/{runId}``: stops the requester's run streaming here (a detached
        run's client has no other way to); ``204`` also for a run that already ended; ``404
        run_not_found`` for an unknown run (another user's run of that id is not theirs);
        ``409 run_elsewhere`` for a run another server process streams."""
        who = self.requester()
        run_key = scoped_id(who, run_id)
        here = self.running_runs.get(run_key)
        if here is not None and here[0] == who.name:
            here[1].stop()
            self.set_status(204)
            self.finish()
            return
        known = await self.journals.find(run_key) if len(run_id) <= MAX_RUN_ID else None
        if here is not None or known is None or known.owner != who.name:
            self.send_refusal(run_not_found(run_id))
        elif known.ended:
            self.set_status(204)
            self.finish()
        else:
            self.send_json(
                409,
                {
                    "code": "run_elsewhere",
                    "message": f"Run {run_id[:80]!r} streams in another server process; stop "
                    "it there, or wait for it to end.",
                },
            )

    def start_stream(self) -> None:
        self.set_status(200)
        self.set_header("Content-Type", MEDIA_TYPE)
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")

    def last_event_id(self) -> int:
        """The client's ``Last-Event-ID`` (header, or ``?lastEventId=``); 0 when absent."""
        raw = self.request.headers.get("Last-Event-ID")
        if raw is None:
            raw = self.get_query_argument("lastEventId", "")
        raw = raw.strip()
        if not raw:
            return 0
        if not raw.isascii() or not raw.isdigit() or int(raw) > MAX_EVENT_ID:
            raise invalid_input(
                "Last-Event-ID must be the id of an event of this run (a non-negative integer).",
                [{"path": "Last-Event-ID", "message": "not an event id", "type": "value_error"}],
            )
        return int(raw)

    async def attach_run(self, run_id: str) -> None:
        """``GET gth/runs/{runId}/events``: the requester's run's events after
        ``Last-Event-ID``, then live until it ends. ``404 run_not_found`` for an unknown run
        (another user's run of that id is not theirs); ``?owner=NAME`` follows user NAME's run,
        for an admin. ``410 events_expired`` for a run whose events are no longer kept."""
        try:
            who = self.requester()
            owner = self.get_query_argument("owner", None) or who.name
            if owner != who.name and not who.admin:
                raise run_not_found(run_id)
            user = who if owner == who.name else who.as_user(owner)
            run_key = scoped_id(user, run_id)
            known = await self.journals.find(run_key) if len(run_id) <= MAX_RUN_ID else None
            if known is None or known.owner != owner:
                raise run_not_found(run_id)
            await self.follow_run(run_key, run_id)
        except ProtocolError as error:
            self.send_refusal(error)

    async def follow_run(self, run_key: str, run_id: str) -> None:
        """Streams a kept run's frames (``run_key``: its key in the journals, see
        ``agui.owners.scoped_id``) after the client's ``Last-Event-ID``; raises a
        ``ProtocolError`` (before any byte) when they are no longer kept."""
        last = self.last_event_id()
        frames = self.journals.follow(run_key, last).__aiter__()
        try:
            first = await frames.__anext__()
        except StopAsyncIteration:
            first = []
        except JournalTrimmedError:
            raise events_expired(run_id) from None
        except Exception as exc:  # the shared journal (Redis) cannot be reached
            log.warning("Run %s: its journal could not be read: %s", run_id, exc)
            raise journal_unavailable(run_id) from None
        self.start_stream()
        task = asyncio.ensure_future(self._relay(first, frames))
        self._stream_task = task
        await asyncio.wait({task})
        if not task.cancelled() and task.exception() is not None:
            # A gap or a lost journal mid-stream: the client re-attaches from its last id.
            log.warning("Run %s: re-attached stream ended early: %s", run_id, task.exception())
        if not self._finished:
            with contextlib.suppress(StreamClosedError):
                self.finish()

    async def _relay(self, first: list[bytes], frames: Any) -> None:
        """Writes batches of frames as they come, with a keep-alive while the run is quiet."""
        pending: asyncio.Future[list[bytes]] | None = None
        try:
            if first:
                self.write(b"".join(first))
            await self.flush()
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(frames.__anext__())
                done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_SECONDS)
                if not done:
                    self.write(KEEPALIVE_FRAME)
                    await self.flush()
                    continue
                got, pending = pending, None
                try:
                    batch = got.result()
                except StopAsyncIteration:
                    return
                self.write(b"".join(batch))
                await self.flush()
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.wait({pending})
            with contextlib.suppress(Exception):
                await frames.aclose()

    async def kernel_for(self, kernel_id: str | None) -> KernelAccess | None:
        """The kernel a run's kernel tools work in: the one its widget names, if the requester
        may execute code in kernels (``403 kernel_forbidden`` otherwise, asked first, so that
        a refused user learns nothing of which kernels run) and this server runs it (``404
        kernel_not_found`` otherwise); ``None`` when the request names none."""
        if kernel_id is None:
            return None
        if not await self.may_execute_in_kernels():
            raise kernel_forbidden(kernel_id)
        pool = self.settings.get(KERNELS_KEY)
        if pool is None or not pool.holds(kernel_id):
            raise kernel_not_found(kernel_id)
        access: KernelAccess = pool.access(kernel_id)
        return access

    async def may_execute_in_kernels(self) -> bool:
        """Whether the requester may run code in this host's kernels. Every kernel tool does
        (the variable readers run code to read the namespace), so a host with an authorizer
        asks it; a host without one (the standalone server, which runs no kernels) lets the
        kernel lookup answer."""
        return True

    def on_connection_close(self) -> None:
        """A client that goes away cancels its run (the thread keeps its last checkpoint), unless
        the run asked to be detached: then it goes on, into its journal alone."""
        super().on_connection_close()  # ends the wait for a body that will not come
        pump = self._pump
        if pump is not None and pump.writer.detachable:
            pump.detach()
            return
        if self._stream_task is not None and not self._stream_task.done():
            self._stream_task.cancel()
