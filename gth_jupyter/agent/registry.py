"""The agents a host serves, assembled from the configuration on first use.

Each host (the Jupyter extension, the standalone server, a kernel) owns one ``AgentRegistry``.
It opens the checkpointer lazily (the SQLite saver needs the running loop) and keeps a build
error instead of raising it, so a bad model setting shows up as a clear refusal
(:class:`~gth_jupyter.contract.errors.AgentUnavailableError`) rather than a host that will not
start.

MCP servers without OAuth have one session each, shared by every user. Servers with
``authProvider: "OAuth"`` are signed in per user (the identity that owns threads): each user has
their own sessions, tokens and pending sign-in, and a runtime whose tools are their own, so a
user's run never calls a tool with another user's sign-in. Without OAuth servers every user
shares one runtime.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ag_ui.core import PROTOCOL_VERSION
from langchain_core.language_models import BaseChatModel

from ..config.effective import EffectiveConfig
from ..config.gth_config import GthConfig
from ..config.schema import McpServerConfig
from ..contract.errors import AgentNotFoundError, AgentUnavailableError
from ..contract.names import DEFAULT_AGENT
from ..contract.shared_state import STATE_KEY
from ..contract.surfaces import A2UI_ACTIVITY
from ..middleware.approvals import ApprovalsMiddleware
from ..middleware.grants import GrantStore
from ..store.checkpoint import CheckpointStore
from ..tools.kernel_tools import KERNEL_TOOLS
from ..tools.mcp.oauth import Delivery, OAuthCallbacks
from ..tools.mcp.servers import McpServers, ServerState
from ..tools.registry import Tool, tool_name
from .resolver import AgentParts, resolve_agent, resolve_tools
from .runtime import Runtime

__all__ = ["AgentRegistry"]

log = logging.getLogger(__name__)


class AgentRegistry:
    """Agents by name; ``default`` is the configured agent."""

    def __init__(
        self,
        config: GthConfig,
        *,
        command: str,
        store: CheckpointStore,
        cwd: Path | None = None,
        model: BaseChatModel | None = None,
        tools: Sequence[Tool] | None = None,
        kernels: bool = True,
        mcp_timeout: float = 30.0,
        mcp_oauth_dir: Path | None = None,
        server_owner: str | None = None,
    ) -> None:
        self.config = config
        self.command = command
        self.store = store
        self.cwd = (cwd or Path.cwd()).resolve()
        self.effective: EffectiveConfig = config.for_command(command)
        #: The runtime of each user (``""``: everyone's, when no server needs a sign-in), with
        #: the MCP generations its tools were built from.
        self._runtimes: dict[str, tuple[tuple[int, int], Runtime]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        #: The user this host runs for (the requester when a caller names none); a token file
        #: of the single-user layout is theirs.
        self.server_owner = server_owner
        self._busy: dict[str, str] = {}
        #: Whether this host reaches notebook kernels (the standalone server does not).
        self.kernels = kernels
        self.parts: AgentParts | None = None
        self.build_error: Exception | None = None
        try:
            self.parts = resolve_agent(
                self.effective,
                cwd=self.cwd,
                model=model,
                extra_tools=tools or (),
                kernel_tools=kernels,
            )
        except Exception as exc:  # reported by info() and refused by runtime()
            log.error("gth-jupyter: the agent could not be built: %s", exc)
            self.build_error = exc
        self._extra_tools = list(tools or ())
        #: The sessions of the MCP servers everyone shares (those without OAuth), opened by
        #: start() (or the first runtime()), closed by close(); none with ``allowedTools: []``
        #: (no server is contacted) or no agent.
        self.mcp: McpServers | None = None
        #: The servers each user signs in to (``authProvider: "OAuth"``), and each user's
        #: sessions of them; every user's sign-ins wait on one set of callbacks.
        self._oauth_servers: dict[str, McpServerConfig] = {}
        self._personal: dict[str, McpServers] = {}
        self._oauth_callbacks = OAuthCallbacks()
        self._oauth_redirect_uri: str | None = None
        self._mcp_timeout = mcp_timeout
        self._mcp_oauth_dir = mcp_oauth_dir
        servers = self.effective.mcp_servers
        if servers and self.effective.allowed_tools != [] and self.parts:
            shared = {k: c for k, c in servers.items() if c.auth_provider != "OAuth"}
            self._oauth_servers = {k: c for k, c in servers.items() if c.auth_provider == "OAuth"}
            self.mcp = McpServers(
                shared,
                cwd=self.cwd,
                pass_env=self.effective.pass_env,
                timeout=mcp_timeout,
                oauth_dir=mcp_oauth_dir,
            )
        #: The shared MCP tool generation the agent's tools were built from.
        self._mcp_generation = 0

    @property
    def oauth_redirect_uri(self) -> str | None:
        """The absolute URL of the host's OAuth callback route (``None`` until a host says)."""
        return self._oauth_redirect_uri

    @oauth_redirect_uri.setter
    def oauth_redirect_uri(self, uri: str) -> None:
        self._oauth_redirect_uri = uri
        for mcp in (self.mcp, *self._personal.values()):
            if mcp is not None:
                mcp.oauth_redirect_uri = uri

    def _user(self, owner: str | None) -> str:
        """Whose sessions and runtime a request gets: with OAuth servers, ``owner`` (the
        requester; by default the server's owner); without them ``""``, everyone's."""
        if not self._oauth_servers:
            return ""
        return owner or self.server_owner or ""

    def _personal_of(self, user: str) -> McpServers | None:
        """``user``'s sessions of the OAuth servers (made on first use; none without them)."""
        if not self._oauth_servers:
            return None
        mcp = self._personal.get(user)
        if mcp is None:
            mcp = self._personal[user] = McpServers(
                self._oauth_servers,
                cwd=self.cwd,
                pass_env=self.effective.pass_env,
                timeout=self._mcp_timeout,
                oauth_dir=self._mcp_oauth_dir,
                oauth_redirect_uri=self._oauth_redirect_uri,
                owner=user,
                oauth_callbacks=self._oauth_callbacks,
                oauth_legacy=bool(self.server_owner) and user == self.server_owner,
            )
        return mcp

    def deliver_oauth(self, state: str, code: str, owner: str | None = None) -> Delivery:
        """The callback route's authorization code for ``state``, from user ``owner``:
        ``delivered``; ``unknown`` when no sign-in waits on it; ``mismatch`` when another user
        started it (it is not handed over)."""
        if not self._oauth_servers:
            return "unknown"
        return self._oauth_callbacks.deliver(state, code, self._user(owner))

    async def start(self, owner: str | None = None) -> None:
        """Connect the shared MCP servers (each within its timeout) and add their tools to the
        agent, then ``owner``'s sessions of the OAuth servers; a server that fails is skipped
        and reported by :meth:`info`. Done once each, before a runtime is built;
        :meth:`runtime` calls it, a host may call it earlier. A server that became ready later
        (after its OAuth authorization) brings its tools in on the next call."""
        if self.mcp is None or self.parts is None:
            return
        loaded = await self.mcp.start()
        if self.mcp.generation != self._mcp_generation and loaded:
            self._mcp_generation = self.mcp.generation
            tools = resolve_tools(
                self.effective,
                cwd=self.cwd,
                extra=self._extra_tools,
                kernel_tools=self.kernels,
                mcp=loaded,
            )
            self.parts = dataclasses.replace(self.parts, tools=tools)
        self._mcp_generation = self.mcp.generation
        personal = self._personal_of(self._user(owner))
        if personal is not None:
            await personal.start()

    @property
    def names(self) -> list[str]:
        return [DEFAULT_AGENT]

    @property
    def model(self) -> BaseChatModel | None:
        """The chat model the agent runs on (``None`` when it could not be built)."""
        return self.parts.model if self.parts is not None else None

    async def runtime(self, name: str = DEFAULT_AGENT, owner: str | None = None) -> Runtime:
        """The runtime of agent ``name`` for user ``owner`` (the requester; by default the
        server's owner): its tools are the shared ones and that user's OAuth servers' alone.
        Raises an ``AgentError`` a host can refuse with."""
        if name not in self.names:
            raise AgentNotFoundError(name, self.names)
        if self.parts is None:
            raise AgentUnavailableError(self.build_error or "unknown error")
        user = self._user(owner)
        built = self._runtimes.get(user)
        if built is None or built[0] != self._generations(user):
            async with self._locks.setdefault(user, asyncio.Lock()):
                built = self._runtimes.get(user)
                if built is None or built[0] != self._generations(user):
                    await self.start(user)
                    generations = self._generations(user)
                    parts = self.parts
                    assert parts is not None
                    runtime = Runtime(
                        parts.model,
                        self._tools_for(user),
                        checkpointer=await self.store.get(),
                        middleware=parts.middleware,
                        system_prompt=parts.system_prompt,
                        recursion_limit=parts.recursion_limit,
                        busy_threads=self._busy,
                        leases=self.store.leases,
                        threads=self.store.threads,
                        pricer=parts.pricer,
                        model_name=(parts.provider, parts.model_name or ""),
                    )
                    built = self._runtimes[user] = (generations, runtime)
        return built[1]

    def _generations(self, user: str) -> tuple[int, int]:
        """The MCP tool generations (shared, ``user``'s) a runtime is current with: one grows
        when a server becomes ready (after its OAuth authorization)."""
        personal = self._personal.get(user) if self._oauth_servers else None
        return (
            self.mcp.generation if self.mcp is not None else 0,
            personal.generation if personal is not None else 0,
        )

    def _tools_for(self, user: str) -> list[Tool]:
        """The agent's tools with ``user``'s OAuth servers' tools among the MCP ones, in the
        order the servers are written."""
        assert self.parts is not None
        personal = self._personal.get(user) if self._oauth_servers else None
        if personal is None or not personal.tools:
            return self.parts.tools
        states = {**(self.mcp.states if self.mcp is not None else {}), **personal.states}
        loaded = [t for key in self.effective.mcp_servers for t in states[key].tools]
        return resolve_tools(
            self.effective,
            cwd=self.cwd,
            extra=self._extra_tools,
            kernel_tools=self.kernels,
            mcp=loaded,
        )

    @property
    def grants(self) -> GrantStore | None:
        """The approvals the person granted while this host runs (``None``: no agent)."""
        for middleware in self.parts.middleware if self.parts is not None else ():
            if isinstance(middleware, ApprovalsMiddleware):
                return middleware.grants
        return None

    def info(self, owner: str | None = None) -> dict[str, Any]:
        """What ``GET gth/info`` answers user ``owner`` (by default the server's owner): the
        model, the agents and their tools, the status, the MCP servers as that user sees them
        (their own sign-ins alone)."""
        parts = self.parts
        user = self._user(owner)
        if parts is not None:
            provider: str | None = parts.provider
            model: str | None = parts.model_name
            offline = parts.offline
        else:
            llm = self.effective.llm
            provider, model, offline = (llm.type, llm.model, False) if llm else (None, None, False)
        built = self._runtimes.get(user)
        current = built[1].tools if built is not None else parts.tools if parts is not None else []
        tools = [tool_name(t) or "?" for t in current]
        body: dict[str, Any] = {
            "status": "ok" if self.build_error is None else "error",
            "provider": provider,
            "model": model,
            "offline": offline,
            "protocolVersion": PROTOCOL_VERSION,
            "command": self.command,
            "agents": [{"name": n, "tools": tools} for n in self.names],
            # What the widget may load without asking (remote images in A2UI and Markdown).
            "a2ui": self.effective.a2ui.model_dump(by_alias=True),
            # The page holds the notebook tools to it: only "bypass" rewrites a %gth cell.
            "approvals": {"mode": self.effective.approvals.mode or "assisted"},
            # What a cell the agent writes records of who wrote it (metadata.gth).
            "provenance": self.config.jupyter.provenance.model_dump(by_alias=True),
            "kernelTools": self._kernel_tools(tools),
            "agui": self._agui(),
        }
        if self.mcp is not None:
            body["mcp"] = self._mcp(user)
        if self.build_error is not None:
            body["error"] = {"code": AgentUnavailableError.code, "message": str(self.build_error)}
        return body

    def _agui(self) -> dict[str, Any]:
        """What the AG-UI endpoint offers: the dialects it streams (1.0; 0.x for clients on
        ``@ag-ui/client`` 0.0.x: no ``outcome``, interrupts as ``CUSTOM on_interrupt``), which
        one this command forces (``auto``: the request's ``protocolVersion`` tells), and its
        shared state (``RunAgentInput.state``, kept per thread in ``STATE_KEY``, streamed as
        ``STATE_SNAPSHOT`` / ``STATE_DELTA``) and activity (A2UI surfaces as
        ``ACTIVITY_SNAPSHOT`` / ``ACTIVITY_DELTA``) support."""
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "dialects": ["1.0", "0.x"],
            "protocol": self.effective.agui.protocol or "auto",
            "state": {"snapshot": True, "delta": True, "channel": STATE_KEY},
            "activity": {"types": [A2UI_ACTIVITY]},
        }

    def _mcp(self, user: str) -> dict[str, Any]:
        """The MCP servers as ``user`` sees them: per server ``status`` (``pending`` until the
        first run; ``needs_authorization`` with its ``authorizationUrl`` while an OAuth server
        waits for that user's sign-in: another user's is never shown), ``tools`` (how many),
        ``error`` when skipped, ``names`` (agent tool name -> the server's name); ``notices``
        says which servers were skipped, for the widget to show."""
        personal = self._personal.get(user) if self._oauth_servers else None
        shared = self.mcp.states if self.mcp is not None else {}
        states = {**shared, **(personal.states if personal is not None else {})}
        servers = {
            key: (states.get(key) or ServerState(key)).info() for key in self.effective.mcp_servers
        }
        notices = [
            f"MCP server '{key}' was skipped: {s['error']}"
            for key, s in servers.items()
            if s["status"] == "error"
        ]
        return {"servers": servers, "notices": notices}

    def leave_out_kernel_tools(self) -> None:
        """For a host without notebook kernels: the kernel tools go, before the agent runs."""
        self.kernels = False
        if self.parts is not None and not self._runtimes:
            kept = [t for t in self.parts.tools if tool_name(t) not in KERNEL_TOOLS]
            self.parts = dataclasses.replace(self.parts, tools=kept)

    def _kernel_tools(self, tools: list[str]) -> dict[str, Any]:
        """Which kernel tools the agent has here, and why none when it has none."""
        if not self.kernels:
            reason = "this server has no notebook kernels, so the kernel tools are left out"
            return {"available": False, "tools": [], "reason": reason}
        enabled = [n for n in KERNEL_TOOLS if n in tools]
        out: dict[str, Any] = {"available": bool(enabled), "tools": enabled}
        if not enabled:
            out["reason"] = f"not enabled for the '{self.command}' command"
        return out

    async def close(self) -> None:
        """Close the MCP sessions (their stdio children end) and the checkpointer."""
        for mcp in (self.mcp, *self._personal.values()):
            if mcp is not None:
                await mcp.close()
        await self.store.close()
