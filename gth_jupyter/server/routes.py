"""The routes both hosts serve, and what their handlers do.

``ROUTES`` is the one route table: the Jupyter extension registers it under ``{base_url}``, the
standalone server at its root, with Gaunt Sloth's own paths (``/agents/{name}/run``, ``/info``,
``/health``) beside it. The two hosts' handlers differ only in how they authenticate; both mix
in :class:`GthRoutesMixin`, which parses, delegates to the protocol layer and answers. Every
refusal is JSON ``{code, message, detail?}``; after the stream has opened, failures travel as
``RUN_ERROR`` instead.

Bodies are read by the handler, not by tornado: tornado's own size limit answers an empty
``400 Bad Request``, so each handler lifts it for its request and counts the bytes itself. A body
whose declared ``Content-Length`` is over the limit is refused before any of it is read (a client
that sent ``Expect: 100-continue`` never sends it); a body that grows past the limit, chunked or
not, is refused at the first byte too many, and nothing past the limit is kept. Either way the
answer is ``413 body_too_large`` at once and the connection closes (after reading and dropping
the rest, within a bound: see :meth:`GthRoutesMixin.refuse_body`).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import sys
from collections.abc import Mapping
from http.client import responses
from typing import Any, NamedTuple

from tornado import web
from tornado.iostream import StreamClosedError

from ..agent import AgentRegistry
from ..agent.contract import DEFAULT_AGENT, KernelAccess
from ..agui import (
    DEFAULT_MAX_BODY_BYTES,
    Journals,
    JournalTrimmedError,
    LocalJournals,
    ProtocolError,
    Requester,
    SSEPump,
    admit_thread,
    detached,
    kernel_id,
    parse_input,
    plan_run,
    runtime_of,
    thread_view,
)
from ..agui.errors import (
    body_too_large,
    events_expired,
    invalid_input,
    journal_unavailable,
    kernel_not_found,
    run_exists,
    run_not_found,
)
from ..agui.sse import KEEPALIVE_FRAME, MEDIA_TYPE

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
    Route("threads", r"/gth/threads/?"),
    Route("thread", r"/gth/threads/([^/]+)"),
    Route("run_events", r"/gth/runs/([^/]+)/events"),
    Route("run_control", r"/gth/runs/([^/]+)"),
    Route("thread_grants", r"/gth/threads/([^/]+)/grants"),
    Route("grant", r"/gth/grants/([^/]+)"),
    Route("oauth_callback", r"/gth/oauth/callback"),
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
#: The host's :class:`~gth_jupyter.agui.Journals` (runs' frames, for re-attaching clients).
JOURNALS_KEY = "gth_journals"
#: The runs streaming in this process: run id -> (owner, its pump).
RUNNING_KEY = "gth_running"
#: How often a re-attached client that waits on a quiet run gets a keep-alive comment.
KEEPALIVE_SECONDS = 15.0
#: The largest ``Last-Event-ID`` accepted (JavaScript's safe integers).
MAX_EVENT_ID = 2**53
#: The host's :class:`~gth_jupyter.kernel.KernelPool` (absent: a host without kernels).
KERNELS_KEY = "gth_kernels"
MAX_BODY_KEY = "gth_max_body_bytes"
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
class GthRoutesMixin(web.RequestHandler):
    """Route logic shared by both hosts; subclasses add authentication.

    The body streams in through :meth:`data_received` and is kept only while it stays within
    the host's limit (``MAX_BODY_KEY``); :attr:`body` is what arrived.
    """

    _stream_task: asyncio.Future[None] | None = None
    _pump: SSEPump | None = None
    _body_size = 0
    _draining = False

    @property
    def max_body_bytes(self) -> int:
        """The largest body this host accepts, in bytes."""
        return int(self.settings.get(MAX_BODY_KEY, DEFAULT_MAX_BODY_BYTES))

    @property
    def body(self) -> bytes:
        """The request body; complete once the verb runs."""
        return b"".join(self._body_chunks)

    async def prepare(self, **kwargs: Any) -> None:
        """Takes the body limit over from tornado, runs the host's checks, then refuses a body
        declared too large before reading any of it. (``kwargs``: Jupyter's ``prepare`` takes
        a keyword of its own.)"""
        self._body_chunks: list[bytes] = []
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
        self.note_oauth_redirect()
        self.send_json(200, self.registry.info())

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

    def finish_oauth(self) -> None:
        """``GET gth/oauth/callback?code=&state=``: hands the code to the MCP server's sign-in
        waiting on ``state`` and answers a small page; an unknown ``state`` is ``400
        oauth_state_unknown``. ``?error=`` (the person refused) ends that sign-in."""
        state = self.get_query_argument("state", "")
        code = self.get_query_argument("code", "")
        error = self.get_query_argument("error", "")
        if not state or not self.registry.deliver_oauth(state, "" if error else code):
            self.send_json(
                400,
                {
                    "code": "oauth_state_unknown",
                    "message": "No MCP server authorization waits for this state; it may have "
                    "finished already, or the server restarted. Start the authorization again.",
                },
            )
            return
        if error:
            title, text = "Authorization refused", f"The authorization was refused ({error})."
        else:
            title, text = "Authorized", "The MCP server is authorized."
        self.set_status(200)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header("Content-Security-Policy", "default-src 'none'")
        self.finish(
            f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(title)}"
            f"</title></head><body><p>{html.escape(text)}</p>"
            "<p>You can close this tab.</p></body></html>"
        )

    def requester(self) -> Requester:
        """Who is asking, as this host authenticated them (each host says how)."""
        raise NotImplementedError

    @property
    def journals(self) -> Journals:
        journals: Journals | None = self.settings.get(JOURNALS_KEY)
        if journals is None:  # a host that set none keeps its journals in this process
            journals = self.settings[JOURNALS_KEY] = LocalJournals()
        return journals

    async def write_threads(self, name: str = DEFAULT_AGENT) -> None:
        """``{"threads": [{threadId, owner, createdAt, updatedAt}]}``: the requester's own
        threads, the latest used first; ``?all=true`` gives an admin every user's."""
        self.note_oauth_redirect()  # this may be the request that connects the MCP servers
        try:
            runtime = await runtime_of(self.registry, name)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        who = self.requester()
        every = who.admin and self.get_query_argument("all", "") in ("1", "true")
        records = await runtime.threads.list(None if every else who.name)
        self.send_json(200, {"threads": [record.to_json() for record in records]})

    async def write_thread(self, thread_id: str, name: str = DEFAULT_AGENT) -> None:
        """A thread's conversation as AG-UI messages, and what it waits on; ``?turn=ID`` gives
        one widget turn's messages alone. Another user's thread is ``404 thread_not_found``."""
        self.note_oauth_redirect()  # this may be the request that connects the MCP servers
        try:
            runtime = await runtime_of(self.registry, name)
            await admit_thread(runtime, thread_id, self.requester(), write=False)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        turn = self.get_query_argument("turn", None)
        self.send_json(200, await thread_view(runtime, thread_id, turn or None))

    async def write_grants(self, thread_id: str) -> None:
        """The standing approvals a run on ``thread_id`` would use: the thread's own and the
        session's (see :mod:`gth_jupyter.middleware.grants`)."""
        self.note_oauth_redirect()  # this may be the request that connects the MCP servers
        try:
            runtime = await runtime_of(self.registry, DEFAULT_AGENT)
            await admit_thread(runtime, thread_id, self.requester(), write=False)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        store = self.registry.grants
        owner = self.requester().name
        grants = store.for_thread(thread_id, owner) if store is not None else []
        self.send_json(200, {"grants": [grant.to_json() for grant in grants]})

    def revoke_grant(self, grant_id: str) -> None:
        """``204`` once the grant is gone; ``404 grant_not_found`` when there is none."""
        store = self.registry.grants
        if store is None or not store.revoke(grant_id, self.requester().name):
            self.send_json(
                404,
                {
                    "code": "grant_not_found",
                    "message": f"There is no standing approval '{grant_id}'; it may have been "
                    "revoked already, or the server restarted.",
                },
            )
            return
        self.set_status(204)
        self.finish()

    async def run_agent(self, name: str) -> None:
        """Runs agent ``name`` on the request body and streams the run as SSE. A ``runId`` that
        is already running (or ran lately) re-attaches to it instead of starting it again."""
        self.note_oauth_redirect()
        who = self.requester()
        try:
            runtime = await runtime_of(self.registry, name)
            request = parse_input(self.body, self.max_body_bytes)
            known = await self.journals.find(request.run_id)
            if known is not None:
                if known.owner != who.name or known.thread_id != request.thread_id:
                    raise run_exists(request.run_id)
                await self.follow_run(request.run_id)
                return
            kernel = self.kernel_for(kernel_id(request))
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
        journal = journals.open(request.run_id, request.thread_id, who.name)
        pump = SSEPump(
            prepared, self.write, self.flush, journal=journal, detachable=detached(request)
        )
        self._pump = pump
        task = asyncio.ensure_future(pump.run())
        self._stream_task = task
        running = self.running_runs
        running[request.run_id] = (who.name, pump)
        try:
            await asyncio.wait({task})
        finally:
            running.pop(request.run_id, None)
            journal.end()
            journals.closed(journal)
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
        """``DELETE gth/runs/{runId}``: stops a run streaming here (a detached run's client has
        no other way to); ``204`` also for a run that already ended; ``404 run_not_found`` for
        an unknown run or another user's; ``409 run_elsewhere`` for a run another server
        process streams."""
        who = self.requester()
        here = self.running_runs.get(run_id)
        if here is not None and here[0] == who.name:
            here[1].stop()
            self.set_status(204)
            self.finish()
            return
        known = await self.journals.find(run_id)
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
        """``GET gth/runs/{runId}/events``: the run's events after ``Last-Event-ID``, then live
        until it ends. ``404 run_not_found`` for an unknown run or another user's."""
        try:
            known = await self.journals.find(run_id)
            who = self.requester()
            if known is None or (known.owner != who.name and not who.admin):
                raise run_not_found(run_id)
            await self.follow_run(run_id)
        except ProtocolError as error:
            self.send_refusal(error)

    async def follow_run(self, run_id: str) -> None:
        """Streams a kept run's frames after the client's ``Last-Event-ID``; raises a
        ``ProtocolError`` (before any byte) when they are no longer kept."""
        last = self.last_event_id()
        frames = self.journals.follow(run_id, last).__aiter__()
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

    def kernel_for(self, kernel_id: str | None) -> KernelAccess | None:
        """The kernel a run's kernel tools work in: the one its widget names, if this server
        runs it (``404 kernel_not_found`` otherwise); ``None`` when the request names none."""
        if kernel_id is None:
            return None
        pool = self.settings.get(KERNELS_KEY)
        if pool is None or not pool.holds(kernel_id):
            raise kernel_not_found(kernel_id)
        access: KernelAccess = pool.access(kernel_id)
        return access

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
