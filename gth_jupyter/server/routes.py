"""The routes both hosts serve, and what their handlers do.

``ROUTES`` is the one route table: the Jupyter extension registers it under ``{base_url}``, the
standalone server at its root, with Gaunt Sloth's own paths (``/agents/{name}/run``, ``/info``,
``/health``) beside it. The two hosts' handlers differ only in how they authenticate; both mix
in :class:`GthRoutesMixin`, which parses, delegates to the protocol layer and answers. Every
refusal is JSON ``{code, message, detail?}``; after the stream has opened, failures travel as
``RUN_ERROR`` instead. Bodies, answers and identity are in :mod:`.base`; runs (start,
re-attach, stop) in :mod:`.run_routes`.
"""

from __future__ import annotations

import asyncio
import html
import logging
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

from tornado import web

from ..agui.capabilities import agent_capabilities
from ..agui.errors import (
    ProtocolError,
    from_agent_error,
    grant_not_found,
    oauth_state_mismatch,
    oauth_state_unknown,
    thread_not_found,
    turn_not_found,
)
from ..agui.history import thread_view, turn_calls
from ..agui.owners import admit_thread, client_record
from ..agui.run import runtime_of
from ..contract.errors import AgentError
from ..contract.names import DEFAULT_AGENT
from ..copy.render import served_copy
from .run_routes import RunRoutes

if TYPE_CHECKING:
    from ..agent.runtime import Runtime

__all__ = [
    "GAUNT_SLOTH_ROUTES",
    "ROUTES",
    "GthRoutesMixin",
    "Route",
    "route_table",
]

log = logging.getLogger(__name__)


class Route(NamedTuple):
    """A path pattern and the name of the handler class that serves it: each host defines a
    class of that name, on its own base (Jupyter's auth, or the standalone token)."""

    handler: str
    pattern: str


#: Every host serves these (under Jupyter's ``base_url``, or at the standalone server's root).
ROUTES: tuple[Route, ...] = (
    Route("HealthHandler", r"/gth/health"),
    Route("InfoHandler", r"/gth/info"),
    Route("RunHandler", r"/gth/agents/([^/]+)/run"),
    Route("CapabilitiesHandler", r"/gth/agents/([^/]+)/capabilities"),
    Route("ThreadsHandler", r"/gth/threads/?"),
    Route("ThreadHandler", r"/gth/threads/([^/]+)"),
    Route("RunEventsHandler", r"/gth/runs/([^/]+)/events"),
    Route("RunControlHandler", r"/gth/runs/([^/]+)"),
    Route("ThreadGrantsHandler", r"/gth/threads/([^/]+)/grants"),
    Route("ThreadContextHandler", r"/gth/threads/([^/]+)/context"),
    Route("GrantHandler", r"/gth/grants/([^/]+)"),
    Route("OAuthCallbackHandler", r"/gth/oauth/callback"),
)
#: Gaunt Sloth's own paths, which its clients post to; the standalone server serves them too.
GAUNT_SLOTH_ROUTES: tuple[Route, ...] = (
    Route("HealthHandler", r"/health"),
    Route("InfoHandler", r"/info"),
    Route("RunHandler", r"/agents/([^/]+)/run"),
    Route("CapabilitiesHandler", r"/agents/([^/]+)/capabilities"),
)


def route_table(
    host: ModuleType, routes: tuple[Route, ...] = ROUTES
) -> list[tuple[str, type[web.RequestHandler]]]:
    """``routes`` with each handler name replaced by the class of that name in the ``host``
    module (a route the host has no handler for fails here, as the host starts)."""
    return [(route.pattern, getattr(host, route.handler)) for route in routes]


class GthRoutesMixin(RunRoutes):
    """Route logic shared by both hosts; subclasses add authentication."""

    # -- routes ---------------------------------------------------------------------------

    def write_health(self) -> None:
        self.send_json(200, {"status": "ok"})

    def write_info(self) -> None:
        """The registry's description as the requester sees it (their own MCP sign-ins)."""
        self.note_oauth_redirect()
        self.send_json(200, self.registry.info(self.requester().name))

    async def write_capabilities(self, name: str) -> None:
        """``GET gth/agents/{name}/capabilities``: the agent's AG-UI ``AgentCapabilities``
        (``404 agent_not_found`` for an agent the server has not)."""
        who = self.requester()
        try:
            runtime = await runtime_of(self.registry, name, who.name)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        self.send_json(200, agent_capabilities(runtime, name, self.registry.info(who.name)))

    def finish_oauth(self) -> None:
        """``GET gth/oauth/callback?code=&state=``: hands the code to the MCP server's sign-in
        waiting on ``state`` and answers a small page; an unknown ``state`` is ``400
        oauth_state_unknown``, one that another user started ``403 oauth_state_mismatch`` (their
        sign-in goes on waiting, and no token is stored). ``?error=`` (the person refused) ends
        that sign-in."""
        state = self.get_query_argument("state", "")
        code = self.get_query_argument("code", "")
        error = self.get_query_argument("error", "")
        owner = self.requester().name
        delivery = self.registry.deliver_oauth(state, "" if error else code, owner)
        if state and delivery == "mismatch":
            self.send_refusal(oauth_state_mismatch())
            return
        if not state or delivery != "delivered":
            self.send_refusal(oauth_state_unknown())
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

    async def write_threads(self, name: str = DEFAULT_AGENT) -> None:
        """``{"threads": [{threadId, owner, createdAt, updatedAt}]}``: the requester's own
        threads, the latest used first; ``?all=true`` gives an admin every user's (two users'
        threads may have the same id: ``owner`` tells them apart). Each ``threadId`` is the id
        its owner's client sends, not its key in the store."""
        self.note_oauth_redirect()  # this may be the request that connects the MCP servers
        who = self.requester()
        try:
            runtime = await runtime_of(self.registry, name, who.name)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        every = who.admin and self.get_query_argument("all", "") in ("1", "true")
        records = await runtime.threads.list(None if every else who.name)
        self.send_json(200, {"threads": [client_record(r).to_json() for r in records]})

    async def _admitted_thread(self, thread_id: str, name: str) -> tuple[Runtime, str] | None:
        """The runtime and store key of a thread the requester may read (its owner, or an admin
        with ``?owner=NAME``); ``None`` once the refusal is sent."""
        who = self.requester()
        owner = self.get_query_argument("owner", None) or None
        try:
            runtime = await runtime_of(self.registry, name, who.name)
            return runtime, await admit_thread(runtime, thread_id, who, write=False, owner=owner)
        except ProtocolError as error:
            self.send_refusal(error)
            return None

    async def write_turn_context(self, thread_id: str, name: str = DEFAULT_AGENT) -> None:
        """``GET gth/threads/{id}/context?turn=ID``: what each model call of that turn was sent
        (every call on the current branch without ``turn``), for the thread's owner alone, or
        an admin with ``?owner=NAME``. ``404 turn_not_found`` for a turn the requester's thread
        has not, ``404 thread_not_found`` for a thread with nothing on it."""
        admitted = await self._admitted_thread(thread_id, name)
        if admitted is None:
            return
        runtime, key = admitted
        turn = self.get_query_argument("turn", None) or None
        found = await turn_calls(runtime, key, turn)
        if found is None:
            self.send_refusal(turn_not_found(thread_id, turn or ""))
        elif turn is None and not found["calls"] and not await runtime.runs(key):
            self.send_refusal(thread_not_found(thread_id))
        else:
            self.send_json(200, {"threadId": thread_id, "turn": turn, **found})

    async def write_thread(self, thread_id: str, name: str = DEFAULT_AGENT) -> None:
        """A thread of the requester's as AG-UI messages, and what it waits on; ``?turn=ID``
        gives one widget turn's messages alone (on whichever branch it is), ``?run=ID`` the
        thread as run ID left it (``404 run_not_found`` for a run it has not). An id the
        requester never used is an empty thread, whoever else uses it. ``?owner=NAME`` reads
        user NAME's thread, for an admin (``404 thread_not_found`` for anyone else).
        ``?copy=1`` adds ``copy``: the static copy a ``%gth`` cell saves of it, rendered from
        this read (``null`` for a turn not on the thread), so the page writes it into the
        notebook with no other read."""
        self.note_oauth_redirect()  # this may be the request that connects the MCP servers
        admitted = await self._admitted_thread(thread_id, name)
        if admitted is None:
            return
        runtime, key = admitted
        turn = self.get_query_argument("turn", None) or None
        run = self.get_query_argument("run", None) or None
        try:
            view = await thread_view(runtime, key, turn, shown_id=thread_id, run=run)
        except AgentError as error:
            self.send_refusal(from_agent_error(error))
            return
        if self.get_query_argument("copy", "") == "1":
            save_photos = self.registry.config.jupyter.save_photos
            # Rendering may shrink images: off the event loop.
            view["copy"] = await asyncio.to_thread(
                served_copy, view, turn=turn, save_photos=save_photos
            )
        self.send_json(200, view)

    async def write_grants(self, thread_id: str) -> None:
        """The standing approvals a run on ``thread_id`` would use: the thread's own and the
        session's (see :mod:`gth_jupyter.middleware.grants`)."""
        self.note_oauth_redirect()  # this may be the request that connects the MCP servers
        who = self.requester()
        try:
            runtime = await runtime_of(self.registry, DEFAULT_AGENT, who.name)
            key = await admit_thread(runtime, thread_id, who, write=False)
        except ProtocolError as error:
            self.send_refusal(error)
            return
        store = self.registry.grants
        owner = self.requester().name
        # A run's grants name its thread by its key in the store (see ``agui.owners``).
        grants = store.for_thread(key, owner) if store is not None else []
        self.send_json(200, {"grants": [grant.to_json() for grant in grants]})

    def revoke_grant(self, grant_id: str) -> None:
        """``204`` once the grant is gone; ``404 grant_not_found`` when there is none."""
        store = self.registry.grants
        if store is None or not store.revoke(grant_id, self.requester().name):
            self.send_refusal(grant_not_found(grant_id))
            return
        self.set_status(204)
        self.finish()
