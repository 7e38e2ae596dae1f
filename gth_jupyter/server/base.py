"""What every route handler of both hosts shares: bodies read within a limit, JSON answers
and refusals, the host's objects (:class:`~.host.GthHost`: the registry, the run service), and
who is asking.

Bodies are read by the handler, not by tornado: tornado's own size limit answers an empty
``400 Bad Request``, so each handler lifts it for its request and counts the bytes itself. A body
whose declared ``Content-Length`` is over the limit is refused before any of it is read (a client
that sent ``Expect: 100-continue`` never sends it); a body that grows past the limit, chunked or
not, is refused at the first byte too many, and nothing past the limit is kept. Either way the
answer is ``413 body_too_large`` at once and the connection closes (after reading and dropping
the rest, within a bound: see :meth:`BaseRoutes.refuse_body`).
"""

from __future__ import annotations

import json
import sys
from http.client import responses
from typing import Any

from tornado import web

from ..agent.registry import AgentRegistry
from ..agui.errors import ProtocolError, body_too_large
from ..agui.owners import Requester
from ..runs.service import RunService
from .host import HOST_KEY, GthHost

__all__ = ["DRAIN_BYTES", "BaseRoutes"]

#: How much of a refused body is read and dropped so that its sender sees the 413.
DRAIN_BYTES = 64 * 1024 * 1024

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


@web.stream_request_body
class BaseRoutes(web.RequestHandler):
    """The shared ground of both hosts' handlers; subclasses add authentication.

    The body streams in through :meth:`data_received` and is kept only while it stays within
    the host's limit (``GthHost.max_body_bytes``); :attr:`body` is what arrived.
    """

    _body_size = 0
    _draining = False
    _preparing = False

    @property
    def host(self) -> GthHost:
        """The host's long-lived objects."""
        host: GthHost = self.settings[HOST_KEY]
        return host

    @property
    def max_body_bytes(self) -> int:
        """The largest body this host accepts, in bytes."""
        return self.host.max_body_bytes

    @property
    def body(self) -> bytes:
        """The request body; complete once the verb runs."""
        return b"".join(self._body_chunks)

    async def prepare(self, **kwargs: Any) -> None:
        """Takes the body limit over from tornado, runs the host's checks, then refuses a body
        declared too large before reading any of it. (``kwargs``: Jupyter's ``prepare`` takes
        a keyword of its own.)"""
        self._body_chunks: list[bytes] = []
        self._preparing = True
        try:
            await self._prepare(**kwargs)
        finally:
            self._preparing = False

    async def _prepare(self, **kwargs: Any) -> None:
        connection = self.request.connection
        if connection is not None and hasattr(connection, "set_max_body_size"):
            # Tornado would answer an over-limit body with an empty 400 of its own, and, after a
            # refusal below, append that 400 to the connection behind the 413.
            connection.set_max_body_size(sys.maxsize)
        parent = super().prepare(**kwargs)
        if parent is not None:
            await parent
        if not self._finished:
            self.admit()
        if self._finished:
            return
        declared = self.request.headers.get("Content-Length", "")
        # Tornado has already refused a non-numeric or contradictory Content-Length.
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            self.refuse_body(int(declared), declared=True)

    def admit(self) -> None:
        """The host's own checks before any body is read; a refusal finishes the request."""

    def data_received(self, chunk: bytes) -> None:
        """Keeps ``chunk`` while the body stays within the limit, else refuses the request."""
        if self._finished:
            return
        self._body_size += len(chunk)
        if self._draining:
            if self._body_size > DRAIN_BYTES:
                self.finish()  # enough read for nothing: close now
            return
        if self._body_size > self.max_body_bytes:
            self._body_chunks.clear()
            self.refuse_body(self._body_size)
            return
        self._body_chunks.append(chunk)

    def refuse_body(self, size: int, *, declared: bool = False) -> None:
        """``413 body_too_large``, then the connection closes.

        The answer goes out at once, but the rest of the body is read and dropped, up to
        :data:`DRAIN_BYTES` in all, before the connection closes: a client that sends its whole
        body before it reads (Python's ``http.client``, ``requests``) would otherwise meet a
        reset connection instead of the answer. A larger body, or one declared too large by a
        client that waits for ``100 Continue`` (and so never sends it), closes at once.
        """
        error = body_too_large(size, self.max_body_bytes)
        self.set_header("Connection", "close")
        waits = declared and self.request.headers.get("Expect", "").lower() == "100-continue"
        if waits or size > DRAIN_BYTES:
            self.send_refusal(error)
            return
        payload = json.dumps(error.to_json()).encode()
        self.set_status(error.status)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.set_header("Content-Length", str(len(payload)))
        self.write(payload)
        self.flush()
        self._draining = True
        # Once the whole body is in, tornado calls the verb: here that only ends the answer.
        setattr(self, self.request.method.lower(), self._end_refusal)

    def _end_refusal(self, *args: Any, **kwargs: Any) -> None:
        if not self._finished:
            self.finish()

    @property
    def registry(self) -> AgentRegistry:
        return self.host.registry

    @property
    def runs(self) -> RunService:
        return self.host.runs

    def send_json(self, status: int, body: Any) -> None:
        if self._preparing:
            # Answered before the body is read: tornado closes the connection after this
            # answer, and a keep-alive client must know not to send its next request on it.
            self.set_header("Connection", "close")
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

    def note_oauth_redirect(self) -> None:
        """Tells the registry where its OAuth callback route is, as this (authenticated)
        request reached the host, before the first run connects the MCP servers."""
        registry = self.registry
        if registry.mcp is None or registry.oauth_redirect_uri:
            return
        base = str(self.settings.get("base_url") or "/")
        if not base.endswith("/"):
            base += "/"
        request = self.request
        registry.oauth_redirect_uri = f"{request.protocol}://{request.host}{base}gth/oauth/callback"

    def requester(self) -> Requester:
        """Who is asking, as this host authenticated them (each host says how)."""
        raise NotImplementedError
