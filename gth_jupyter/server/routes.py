"""What every host's handlers do: run an agent over SSE, describe it, report health.

The Jupyter handlers and the standalone server's handlers differ only in how they authenticate;
both mix this in. Every refusal is JSON ``{code, message, detail?}``; after the stream has
opened, failures travel as ``RUN_ERROR`` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from http.client import responses
from typing import Any

from tornado import web
from tornado.iostream import StreamClosedError

from ..agui.errors import ProtocolError
from ..agui.history import to_agui_messages
from ..agui.mapping import to_interrupt
from ..agui.run import DEFAULT_MAX_BODY_BYTES, PreparedRun, prepare_run, stream_events
from ..agui.sse import MEDIA_TYPE, SSEWriter
from .agents import DEFAULT_AGENT, AgentRegistry

log = logging.getLogger(__name__)

REGISTRY_KEY = "gth_registry"
MAX_BODY_KEY = "gth_max_body_bytes"

_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    500: "internal_error",
    503: "unavailable",
}


class GthRoutesMixin(web.RequestHandler):
    """Route logic shared by both hosts; subclasses add authentication."""

    _stream_task: asyncio.Task[None] | None = None

    @property
    def registry(self) -> AgentRegistry:
        registry: AgentRegistry = self.settings[REGISTRY_KEY]
        return registry

    def send_json(self, status: int, body: Any) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps(body))

    def send_refusal(self, error: ProtocolError) -> None:
        for name, value in error.headers.items():
            self.set_header(name, value)
        self.send_json(error.status, error.to_json())

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Every error this handler answers, the framework's own included, is JSON with a code."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ProtocolError):
            self.clear_header("Content-Type")
            self.set_status(exc.status)
            self.send_refusal(exc)
            return
        message = responses.get(status_code, "Error")
        if isinstance(exc, web.HTTPError) and exc.log_message:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        elif status_code >= 500:
            message = "The server failed to handle the request; see the server log."
        code = _STATUS_CODES.get(status_code, "http_error")
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(json.dumps({"code": code, "message": str(message)}))

    # -- routes ---------------------------------------------------------------------------

    def write_health(self) -> None:
        self.send_json(200, {"status": "ok"})

    def write_info(self) -> None:
        self.send_json(200, self.registry.info())

    async def write_thread(self, thread_id: str, name: str = DEFAULT_AGENT) -> None:
        """A thread's conversation as AG-UI messages, and what it waits on."""
        try:
            runtime = await self.registry.runtime(name)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        state = await runtime.thread_state(thread_id)
        pending = [
            to_interrupt(p).model_dump(mode="json", by_alias=True, exclude_none=True)
            for p in state.pending
        ]
        self.send_json(
            200,
            {
                "threadId": thread_id,
                "messages": to_agui_messages(state.messages),
                "pendingToolCallIds": [p.tool_call_id for p in state.pending if p.client_tool],
                "interrupts": pending,
                "busy": runtime.is_busy(thread_id),
            },
        )

    async def run_agent(self, name: str) -> None:
        try:
            runtime = await self.registry.runtime(name)
            limit = int(self.settings.get(MAX_BODY_KEY, DEFAULT_MAX_BODY_BYTES))
            prepared = await prepare_run(runtime, self.request.body, max_body_bytes=limit)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        self.set_status(200)
        self.set_header("Content-Type", MEDIA_TYPE)
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        task = asyncio.ensure_future(self._pump(prepared))
        self._stream_task = task
        await asyncio.wait({task})
        if not task.cancelled() and task.exception() is not None:
            log.warning("AG-UI stream ended early: %s", task.exception())
        if not self._finished:
            with contextlib.suppress(StreamClosedError):
                self.finish()

    async def _pump(self, prepared: PreparedRun) -> None:
        events = stream_events(prepared)
        try:
            async with SSEWriter(self.write, self.flush) as writer:
                async for event in events:
                    await writer.send(event)
                await writer.flush()
        finally:
            await events.aclose()
            prepared.claim.release()

    def on_connection_close(self) -> None:
        """A client that goes away cancels its run; the thread keeps its last checkpoint."""
        if self._stream_task is not None and not self._stream_task.done():
            self._stream_task.cancel()
