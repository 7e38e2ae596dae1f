"""The Jupyter extension's handlers: the shared routes behind Jupyter's auth.

Every verb is ``@web.authenticated`` (a token, or the login cookie plus XSRF for a browser) and
``@authorized`` on the ``gth`` resource, so a Jupyter server's authorizer can grant or refuse the
agent separately from kernels and files; a run that names a kernel also needs ``execute`` on
``kernels`` (its kernel tools run code there). Each handler parses, delegates to
:class:`~gth_jupyter.server.routes.GthRoutesMixin` and answers; the logic lives below it.
"""

from __future__ import annotations

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..agui.owners import Requester
from .identity import server_owner
from .routes import GthRoutesMixin

__all__ = ["AUTH_RESOURCE", "GthAPIHandler"]

AUTH_RESOURCE = "gth"
#: What a run that names a kernel needs besides ``gth``: Jupyter's own permission to run code
#: in kernels (what ``POST /api/kernels`` and a kernel's channels need).
KERNEL_ACTION, KERNEL_RESOURCE = "execute", "kernels"
#: Jupyter's own identity providers, which name every token or password holder anonymously:
#: under them one person runs the server, and every thread is theirs.
_ANONYMOUS_PROVIDERS = (IdentityProvider, PasswordIdentityProvider)


class GthAPIHandler(GthRoutesMixin, APIHandler):
    """Base of the extension's handlers: Jupyter's API handler with JSON refusals."""

    auth_resource = AUTH_RESOURCE

    def requester(self) -> Requester:
        """The authenticated user: the Hub user under JupyterHub (or any identity provider that
        names users); with Jupyter's own anonymous token or password login, the server's
        owner."""
        owner = server_owner()
        user = self.current_user
        named = type(self.identity_provider) not in _ANONYMOUS_PROVIDERS
        name = str(getattr(user, "username", "") or "") if named else ""
        name = name or owner
        return Requester(name, admin=name in self.host.admin_users, server_owner=owner)

    async def may_execute_in_kernels(self) -> bool:
        """Asks the server's authorizer whether the requester may ``execute`` on ``kernels``:
        the ``gth`` resource alone must not reach a kernel the user may not use directly."""
        user = self.current_user
        if not user:
            return False
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, user, KERNEL_ACTION, KERNEL_RESOURCE)
        )
        return bool(allowed)


class HealthHandler(GthAPIHandler):
    """``{base_url}gth/health``: whether the extension answers."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """``200 {"status": "ok"}``."""
        self.write_health()


class InfoHandler(GthAPIHandler):
    """``{base_url}gth/info``: the model, the agents and their tools."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """The agent's description; ``status: "error"`` and the reason if it could not be
        built."""
        self.write_info()


class CapabilitiesHandler(GthAPIHandler):
    """``{base_url}gth/agents/{name}/capabilities``: what the agent can do (AG-UI)."""

    @web.authenticated
    @authorized
    async def get(self, name: str) -> None:
        """The agent's ``AgentCapabilities``."""
        await self.write_capabilities(name)


class ThreadsHandler(GthAPIHandler):
    """``{base_url}gth/threads``: the requester's threads."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        """``{"threads": [{threadId, owner, createdAt, updatedAt}]}``, the latest used first."""
        await self.write_threads()


class RunEventsHandler(GthAPIHandler):
    """``{base_url}gth/runs/{id}/events``: re-attach to a run (``Last-Event-ID``)."""

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        """The run's SSE frames after ``Last-Event-ID``, then live until it ends; ``404
        run_not_found``, ``410 events_expired``."""
        await self.attach_run(run_id)


class RunControlHandler(GthAPIHandler):
    """``{base_url}gth/runs/{id}``: a run in flight."""

    @web.authenticated
    @authorized
    async def delete(self, run_id: str) -> None:
        """Stops it: ``204``; ``404 run_not_found``; ``409 run_elsewhere``."""
        await self.cancel_run(run_id)


class ThreadHandler(GthAPIHandler):
    """``{base_url}gth/threads/{id}``: a thread as a page rebuilds it after a reload."""

    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's AG-UI messages, the interrupts it waits on, and whether it is busy."""
        await self.write_thread(thread_id)


class ThreadContextHandler(GthAPIHandler):
    """``gth/threads/{id}/context``: what each model call of a turn was sent."""

    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The turn's model calls (``?turn=ID``), each as it was sent."""
        await self.write_turn_context(thread_id)


class ThreadGrantsHandler(GthAPIHandler):
    """``{base_url}gth/threads/{id}/grants``: the approvals granted for later calls."""

    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """``{"grants": [{id, scope, kind, label, createdAt}]}``: the thread's and the
        session's."""
        await self.write_grants(thread_id)


class GrantHandler(GthAPIHandler):
    """``{base_url}gth/grants/{id}``: one standing approval."""

    @web.authenticated
    @authorized
    def delete(self, grant_id: str) -> None:
        """Revokes it: ``204``, or ``404 grant_not_found``."""
        self.revoke_grant(grant_id)


class RunHandler(GthAPIHandler):
    """``{base_url}gth/agents/{name}/run``: the AG-UI endpoint."""

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        """Runs agent ``name`` on a ``RunAgentInput`` and streams AG-UI events as SSE; a
        refusal is JSON with a stable ``code`` before any event."""
        await self.run_agent(name)


class OAuthCallbackHandler(GthAPIHandler):
    """``{base_url}gth/oauth/callback``: where an MCP server's authorization server sends the
    browser back with the code."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        """A small page saying the tab may close; ``400 oauth_state_unknown`` for a state no
        authorization waits on."""
        self.finish_oauth()
