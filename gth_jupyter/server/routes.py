"""The routes both hosts serve, and what their handlers do.

``ROUTES`` is the one route table: the Jupyter extension registers it under ``{base_url}``, the
standalone server at its root, with Gaunt Sloth's own paths (``/agents/{name}/run``, ``/info``,
``/health``) beside it. The two hosts' handlers differ only in how they authenticate; both mix
in :class:`GthRoutesMixin`, which parses, delegates to the protocol layer and answers. Every
refusal is JSON ``{code, message, detail?}``; after the stream has opened, failures travel as
``RUN_ERROR`` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from http.client import responses
from typing import Any, NamedTuple

from tornado import web
from tornado.iostream import StreamClosedError

from ..agent import AgentRegistry
from ..agent.contract import DEFAULT_AGENT
from ..agui import (
    DEFAULT_MAX_BODY_BYTES,
    ProtocolError,
    prepare_run,
    pump_sse,
    runtime_of,
    thread_view,
)
from ..agui.sse import MEDIA_TYPE

__all__ = ["GAUNT_SLOTH_ROUTES", "ROUTES", "GthRoutesMixin", "Route", "route_table"]

log = logging.getLogger(__name__)


class Route(NamedTuple):
    """A path pattern and the name of the handler that serves it."""

    handler: str
    pattern: str


#: Every host serves these (under Jupyter's ``base_url``, or at the standalone server's root).
ROUTES: tuple[Route, ...] = (
    Route("health", r"/gth/health"),
    Route("info", r"/gth/info"),
    Route("run", r"/gth/agents/([^/]+)/run"),
    Route("thread", r"/gth/threads/([^/]+)"),
)
#: Gaunt Sloth's own paths, which its clients post to; the standalone server serves them too.
GAUNT_SLOTH_ROUTES: tuple[Route, ...] = (
    Route("health", r"/health"),
    Route("info", r"/info"),
    Route("run", r"/agents/([^/]+)/run"),
)


def route_table(
    handlers: Mapping[str, type[web.RequestHandler]], routes: tuple[Route, ...] = ROUTES
) -> list[tuple[str, type[web.RequestHandler]]]:
    """``routes`` with each handler name replaced by the host's handler class."""
    return [(route.pattern, handlers[route.handler]) for route in routes]


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
            runtime = await runtime_of(self.registry, name)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        self.send_json(200, await thread_view(runtime, thread_id))

    async def run_agent(self, name: str) -> None:
        """Runs agent ``name`` on the request body and streams the run as SSE."""
        try:
            runtime = await runtime_of(self.registry, name)
            limit = int(self.settings.get(MAX_BODY_KEY, DEFAULT_MAX_BODY_BYTES))
            prepared = await prepare_run(runtime, self.request.body, max_body_bytes=limit)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        self.set_status(200)
        self.set_header("Content-Type", MEDIA_TYPE)
        self.set_header("Cache-Control", "no-cache")
        self.set_header("X-Accel-Buffering", "no")
        task = asyncio.ensure_future(pump_sse(prepared, self.write, self.flush))
        self._stream_task = task
        await asyncio.wait({task})
        if not task.cancelled() and task.exception() is not None:
            log.warning("AG-UI stream ended early: %s", task.exception())
        if not self._finished:
            with contextlib.suppress(StreamClosedError):
                self.finish()

    def on_connection_close(self) -> None:
        """A client that goes away cancels its run; the thread keeps its last checkpoint."""
        if self._stream_task is not None and not self._stream_task.done():
            self._stream_task.cancel()
