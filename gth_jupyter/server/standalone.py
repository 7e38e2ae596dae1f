"""``gth-jupyter serve``: the same routes for AG-UI clients outside Jupyter.

Bound to loopback by default and always behind a token (``Authorization: token T`` or
``Bearer T``), with CORS headers from ``commands.api.cors``. It serves the same route table as
the Jupyter extension (``/gth/...``) and Gaunt Sloth's own paths beside it
(``/agents/{name}/run``, ``/info``, ``/health``), which its clients post to.

Each request passes, in order: the ``Host`` check, a preflight answer (``OPTIONS`` on a real
route, no token needed), the token, the body limit. The ``Host`` check is the DNS-rebinding
guard Jupyter's own server applies: a web page on ``attacker.example`` whose name an attacker
re-points at 127.0.0.1 reaches a loopback server from the victim's browser, but its requests
still say ``Host: attacker.example``; while the server listens on loopback only, any ``Host``
that is not a loopback name or address gets ``403 host_not_allowed``.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from tornado import web

from ..agent.registry import AgentRegistry
from ..agui.errors import host_not_allowed, route_not_found, unauthorized
from ..agui.owners import Requester
from ..config.effective import EffectiveConfig
from ..runs.journal import Journals
from ..runs.service import RunService
from .host import HOST_KEY, GthHost
from .identity import server_owner
from .routes import GAUNT_SLOTH_ROUTES, ROUTES, GthRoutesMixin, route_table
from .token import check_token

__all__ = [
    "StandaloneHandler",
    "StandaloneHost",
    "cors_headers",
    "is_loopback_host",
    "make_app",
]


@dataclass
class StandaloneHost(GthHost):
    """The standalone server's host object: its ``token``; the identity the token stands for
    (``user``: ``--user``, default the OS account); the user the server runs for
    (``server_owner``: the OS account, or the Hub user, whose ids are stored unscoped, so a
    notebook kernel of that account shares their threads, see ``agui.owners``); the CORS
    headers; whether to refuse a ``Host`` that is not loopback (``check_host``)."""

    token: str = ""
    user: str = ""
    server_owner: str = ""
    cors: dict[str, str] = field(default_factory=dict)
    check_host: bool = True


_HOST_PORT = re.compile(r"^(?P<host>\[[^\]]*\]|[^:]*)(?::\d*)?$")


def is_loopback_host(host: str) -> bool:
    """Whether a ``Host`` header names this machine's loopback: ``localhost``, an address in
    127.0.0.0/8 or ``[::1]``, with or without a port. Anything unparsable is not."""
    match = _HOST_PORT.match(host.strip())
    if match is None:
        return False
    name = match.group("host").lower()
    if name.startswith("["):
        name = name[1:-1]
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class StandaloneHandler(GthRoutesMixin):
    """The ``Host`` check, token auth and CORS for every route; preflight needs no token."""

    @property
    def host(self) -> StandaloneHost:
        host: StandaloneHost = self.settings[HOST_KEY]
        return host

    def requester(self) -> Requester:
        """The token's identity: the server has one token, and every thread is its holder's.
        A holder other than the server's own account (``--user``) has scoped ids, so servers
        of several users sharing one database keep their threads apart."""
        name = self.host.user or "owner"
        return Requester(name, server_owner=self.host.server_owner or name)

    def set_default_headers(self) -> None:
        for header, value in self.host.cors.items():
            self.set_header(header, value)

    def admit(self) -> None:
        """Refuses a foreign ``Host`` (on loopback), then a missing or wrong token."""
        if self.host.check_host and not is_loopback_host(
            self.request.headers.get("Host", "localhost")
        ):
            self.send_refusal(host_not_allowed())
            return
        if self.request.method == "OPTIONS":
            return
        expected = self.host.token
        header = self.request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() not in ("token", "bearer") or not hmac.compare_digest(
            given.strip().encode(), expected.encode()
        ):
            self.send_refusal(unauthorized())

    def options(self, *args: Any) -> None:
        self.set_status(204)
        self.finish()


class HealthHandler(StandaloneHandler):
    """``/gth/health`` and ``/health``: whether the server answers."""

    def get(self) -> None:
        """``200 {"status": "ok"}``."""
        self.write_health()


class InfoHandler(StandaloneHandler):
    """``/gth/info`` and ``/info``: the model, the agents and their tools."""

    def get(self) -> None:
        """The agent's description, as the Jupyter extension gives it."""
        self.write_info()


class CapabilitiesHandler(StandaloneHandler):
    """``/gth/agents/{name}/capabilities`` and ``/agents/{name}/capabilities``: what the agent
    can do (AG-UI ``AgentCapabilities``)."""

    async def get(self, name: str) -> None:
        """The agent's capabilities, as the Jupyter extension gives them."""
        await self.write_capabilities(name)


class RunHandler(StandaloneHandler):
    """``/gth/agents/{name}/run`` and ``/agents/{name}/run``: the AG-UI endpoint."""

    async def post(self, name: str) -> None:
        """Runs agent ``name`` and streams AG-UI events as SSE; refusals are JSON."""
        await self.run_agent(name)


class ThreadsHandler(StandaloneHandler):
    """``/gth/threads``: the token holder's threads."""

    async def get(self) -> None:
        """``{"threads": [{threadId, owner, createdAt, updatedAt}]}``, the latest used first."""
        await self.write_threads()


class RunEventsHandler(StandaloneHandler):
    """``/gth/runs/{id}/events``: re-attach to a run with ``Last-Event-ID``."""

    async def get(self, run_id: str) -> None:
        """The run's frames after ``Last-Event-ID``, then live until it ends."""
        await self.attach_run(run_id)


class RunControlHandler(StandaloneHandler):
    """``/gth/runs/{id}``: a run in flight."""

    async def delete(self, run_id: str) -> None:
        """Stops it: ``204``; ``404 run_not_found``; ``409 run_elsewhere``."""
        await self.cancel_run(run_id)


class ThreadHandler(StandaloneHandler):
    """``/gth/threads/{id}``: a thread as a client rebuilds it."""

    async def get(self, thread_id: str) -> None:
        """The thread's AG-UI messages, the interrupts it waits on, and whether it is busy."""
        await self.write_thread(thread_id)


class ThreadContextHandler(StandaloneHandler):
    """``gth/threads/{id}/context``: what each model call of a turn was sent."""

    async def get(self, thread_id: str) -> None:
        """The turn's model calls (``?turn=ID``), each as it was sent."""
        await self.write_turn_context(thread_id)


class ThreadGrantsHandler(StandaloneHandler):
    """``/gth/threads/{id}/grants``: the approvals granted for later calls."""

    async def get(self, thread_id: str) -> None:
        """The thread's and the session's standing approvals."""
        await self.write_grants(thread_id)


class GrantHandler(StandaloneHandler):
    """``/gth/grants/{id}``: one standing approval."""

    def delete(self, grant_id: str) -> None:
        """Revokes it: ``204``, or ``404 grant_not_found``."""
        self.revoke_grant(grant_id)


class OAuthCallbackHandler(StandaloneHandler):
    """``/gth/oauth/callback``: the browser comes back from an MCP server's authorization
    server without the token, so only the ``Host`` check applies; the unguessable ``state``
    (which must match a sign-in under way) is what admits it."""

    def admit(self) -> None:
        if self.host.check_host and not is_loopback_host(
            self.request.headers.get("Host", "localhost")
        ):
            super().admit()  # refuses the foreign Host

    def get(self) -> None:
        """A small page saying the tab may close; ``400 oauth_state_unknown`` otherwise."""
        self.finish_oauth()


class NotFoundHandler(StandaloneHandler):
    """Every other path, with any verb: ``404 {"code": "not_found"}``; a preflight too, so
    CORS answers only on real routes."""

    def get(self, *args: Any) -> None:
        self.send_refusal(route_not_found())

    post = put = patch = delete = head = options = get


def cors_headers(effective: EffectiveConfig) -> dict[str, str]:
    cors = effective.cors
    allow_headers = [h.strip() for h in cors.allow_headers.split(",") if h.strip()]
    if not any(h.lower() == "authorization" for h in allow_headers):
        allow_headers.append("Authorization")  # the token travels in it
    return {
        "Access-Control-Allow-Origin": cors.allow_origin,
        "Access-Control-Allow-Methods": cors.allow_methods,
        "Access-Control-Allow-Headers": ", ".join(allow_headers),
    }


def make_app(
    registry: AgentRegistry,
    *,
    token: str,
    max_body_bytes: int,
    check_host: bool = True,
    user: str | None = None,
    journals: Journals | None = None,
) -> web.Application:
    """The standalone server's application for ``registry``, behind ``token``, whose holder is
    ``user`` (default: the OS account); ``journals`` keep its runs' frames (default: in this
    process).

    ``check_host`` refuses requests whose ``Host`` is not loopback; turn it off only when the
    server listens beyond loopback (``--allow-remote``), where clients use other names.
    """
    check_token(token, "make_app")  # a short token is refused here too, not only by the CLI
    registry.leave_out_kernel_tools()  # no notebook kernels here: gth/info says so
    user = user or server_owner()
    if registry.server_owner is None:  # the token's holder: the single-user sign-ins are theirs
        registry.server_owner = user
    host = StandaloneHost(
        registry,
        RunService(journals),
        max_body_bytes,
        token=token,
        user=user,
        server_owner=server_owner(),
        cors=cors_headers(registry.effective),
        check_host=check_host,
    )
    settings: dict[str, Any] = {HOST_KEY: host, "default_handler_class": NotFoundHandler}
    return web.Application(
        route_table(sys.modules[__name__], ROUTES + GAUNT_SLOTH_ROUTES), **settings
    )
