"""The run routes: start a run and stream it, re-attach to one (``Last-Event-ID``), stop one.

Routing only: each route reads the request, asks the host's run service
(:class:`~gth_jupyter.runs.RunService`, ``self.runs``), and answers. ``GET gth/runs/{id}/events``
and a ``POST`` of a ``runId`` already known replay the run's journal after the client's last id
and then follow the run live.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from tornado.iostream import StreamClosedError

from ..agui.errors import ProtocolError, invalid_input, run_exists, run_not_found
from ..agui.owners import scoped_id
from ..agui.request import parse_request
from ..agui.run import runtime_of
from ..runs.service import Transport
from ..runs.sse import MEDIA_TYPE
from .base import BaseRoutes

__all__ = ["MAX_EVENT_ID", "RunRoutes"]

log = logging.getLogger(__name__)

#: The largest ``Last-Event-ID`` accepted (JavaScript's safe integers).
MAX_EVENT_ID = 2**53


class RunRoutes(BaseRoutes):
    """Starting, following and stopping runs."""

    _stream_task: asyncio.Future[Any] | None = None
    _run_key: str | None = None

    async def run_agent(self, name: str) -> None:
        """Runs agent ``name`` on the request body and streams the run as SSE. A ``runId`` that
        is already running (or ran lately) re-attaches to it instead of starting it again."""
        self.note_oauth_redirect()
        who = self.requester()
        runs = self.runs
        try:
            runtime = await runtime_of(self.registry, name, who.name)
            request = parse_request(self.body, self.max_body_bytes)
            given = request.input
            # Runs are kept by the requester's own id (another user's equal id is another run).
            run_key = scoped_id(who, given.run_id)
            known = await runs.find(run_key, given.run_id)
            if known is not None:
                if known.owner != who.name or known.thread_id != given.thread_id:
                    raise run_exists(given.run_id)
                await self.follow_run(run_key, given.run_id)
                return
            kernel = await self.host.kernel_for(request.kernel_id, self.may_execute_in_kernels)
        except ProtocolError as error:
            self.send_refusal(error)
            return

        def opened() -> None:  # planned: the answer is a stream from here on
            self.start_stream()
            self._run_key = run_key

        transport = Transport(self.write, self.flush, opened, run_key=run_key, owner=who.name)
        try:
            pump = await runs.start(
                runtime,
                request,
                transport,
                kernel=kernel,
                requester=who,
                protocol=self.registry.effective.agui.protocol or "auto",
            )
        except ProtocolError as error:  # refused before the stream opened
            self.send_refusal(error)
            return
        finally:
            self._run_key = None
        if not self._finished and not pump.writer.detached:
            with contextlib.suppress(StreamClosedError):
                self.finish()

    async def cancel_run(self, run_id: str) -> None:
        """``DELETE gth/runs/{runId}``: stops the requester's run streaming here (a detached
        run's client has no other way to); ``204`` also for a run that already ended; ``404
        run_not_found`` for an unknown run (another user's run of that id is not theirs);
        ``409 run_elsewhere`` for a run another server process streams."""
        who = self.requester()
        try:
            await self.runs.cancel(who.name, scoped_id(who, run_id), run_id)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        self.set_status(204)
        self.finish()

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
            known = await self.runs.find(run_key, run_id)
            if known is None or known.owner != owner:
                raise run_not_found(run_id)
            await self.follow_run(run_key, run_id)
        except ProtocolError as error:
            self.send_refusal(error)

    async def follow_run(self, run_key: str, run_id: str) -> None:
        """Streams a kept run's frames (``run_key``: its key in the journals, see
        ``agui.owners.scoped_id``) after the client's ``Last-Event-ID``; raises a
        ``ProtocolError`` (before any byte) when they are no longer kept."""
        relay = await self.runs.follow(run_key, run_id, self.last_event_id())
        self.start_stream()
        await self._stream(
            relay.run(self.write, self.flush), f"Run {run_id}: re-attached stream ended early"
        )

    async def _stream(self, work: Coroutine[Any, Any, None], note: str) -> None:
        """Runs ``work`` (writing this response) until it ends or the client leaves, then
        finishes the response."""
        task = asyncio.ensure_future(work)
        self._stream_task = task
        await asyncio.wait({task})
        self._stream_task = None
        if not task.cancelled() and task.exception() is not None:
            # A gap or a lost journal mid-stream: the client re-attaches from its last id.
            log.warning("%s: %s", note, task.exception())
        if not self._finished:
            with contextlib.suppress(StreamClosedError):
                self.finish()

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
        if self._run_key is not None:
            self.runs.leave(self._run_key)
            return
        if self._stream_task is not None and not self._stream_task.done():
            self._stream_task.cancel()
