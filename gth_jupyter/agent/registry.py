"""The agents a host serves, assembled from the configuration on first use.

Each host (the Jupyter extension, the standalone server, a kernel) owns one ``AgentRegistry``.
It opens the checkpointer lazily (the SQLite saver needs the running loop) and keeps a build
error instead of raising it, so a bad model setting shows up as a clear refusal
(:class:`~gth_jupyter.agent.contract.AgentUnavailableError`) rather than a host that will not
start.
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

from ..config import EffectiveConfig, GthConfig
from ..middleware.approvals import ApprovalsMiddleware
from ..middleware.grants import GrantStore
from ..store import CheckpointStore
from ..tools.kernel_tools import KERNEL_TOOLS
from ..tools.mcp import McpServers
from ..tools.registry import Tool, tool_name
from .contract import (
    A2UI_ACTIVITY,
    DEFAULT_AGENT,
    STATE_KEY,
    AgentNotFoundError,
    AgentUnavailableError,
)
from .resolver import AgentParts, resolve_agent, resolve_tools
from .runtime import Runtime

__all__ = ["DEFAULT_AGENT", "AgentRegistry"]

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
    ) -> None:
        self.config = config
        self.command = command
        self.store = store
        self.cwd = (cwd or Path.cwd()).resolve()
        self.effective: EffectiveConfig = config.for_command(command)
        self._runtime: Runtime | None = None
        self._lock = asyncio.Lock()
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
        #: The MCP servers' sessions, opened by start() (or the first runtime()), closed by
        #: close(); none with ``allowedTools: []`` (no server is contacted) or no agent.
        self.mcp: McpServers | None = None
        if self.effective.mcp_servers and self.effective.allowed_tools != [] and self.parts:
            self.mcp = McpServers(
                self.effective.mcp_servers,
                cwd=self.cwd,
                pass_env=self.effective.pass_env,
                timeout=mcp_timeout,
                oauth_dir=mcp_oauth_dir,
            )
        #: The MCP tool generation the agent's tools and runtime were built from.
        self._mcp_generation = 0
        self._runtime_generation = 0

    @property
    def oauth_redirect_uri(self) -> str | None:
        """The absolute URL of the host's OAuth callback route (``None`` until a host says)."""
        return self.mcp.oauth_redirect_uri if self.mcp is not None else None

    @oauth_redirect_uri.setter
    def oauth_redirect_uri(self, uri: str) -> None:
        if self.mcp is not None:
            self.mcp.oauth_redirect_uri = uri

    def deliver_oauth(self, state: str, code: str) -> bool:
        """The callback route's authorization code for ``state``; false when none waits."""
        return self.mcp is not None and self.mcp.deliver_oauth(state, code)

    async def start(self) -> None:
        """Connect the MCP servers (each within its timeout) and add their tools to the agent;
        a server that fails is skipped and reported by :meth:`info`. Done once, before the
        runtime is built; :meth:`runtime` calls it, a host may call it earlier. A server that
        became ready later (after its OAuth authorization) brings its tools in on the next
        call."""
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

    @property
    def names(self) -> list[str]:
        return [DEFAULT_AGENT]

    @property
    def model(self) -> BaseChatModel | None:
        """The chat model the agent runs on (``None`` when it could not be built)."""
        return self.parts.model if self.parts is not None else None

    async def runtime(self, name: str = DEFAULT_AGENT) -> Runtime:
        """The runtime of agent ``name``; raises an ``AgentError`` a host can refuse with."""
        if name not in self.names:
            raise AgentNotFoundError(name, self.names)
        if self.parts is None:
            raise AgentUnavailableError(self.build_error or "unknown error")
        if self._runtime is None or self._mcp_stale():
            async with self._lock:
                if self._runtime is None or self._mcp_stale():
                    await self.start()
                    self._runtime_generation = self._mcp_generation
                    parts = self.parts
                    assert parts is not None
                    self._runtime = Runtime(
                        parts.model,
                        parts.tools,
                        checkpointer=await self.store.get(),
                        middleware=parts.middleware,
                        system_prompt=parts.system_prompt,
                        recursion_limit=parts.recursion_limit,
                        busy_threads=self._busy,
                        leases=self.store.leases,
                        threads=self.store.threads,
                    )
        return self._runtime

    def _mcp_stale(self) -> bool:
        """Whether an MCP server became ready since the runtime was built."""
        return self.mcp is not None and self.mcp.generation != self._runtime_generation

    @property
    def grants(self) -> GrantStore | None:
        """The approvals the person granted while this host runs (``None``: no agent)."""
        for middleware in self.parts.middleware if self.parts is not None else ():
            if isinstance(middleware, ApprovalsMiddleware):
                return middleware.grants
        return None

    def info(self) -> dict[str, Any]:
        """What ``GET gth/info`` answers: the model, the agents and their tools, the status."""
        parts = self.parts
        if parts is not None:
            provider: str | None = parts.provider
            model: str | None = parts.model_name
            offline = parts.offline
        else:
            llm = self.effective.llm
            provider, model, offline = (llm.type, llm.model, False) if llm else (None, None, False)
        tools = [tool_name(t) or "?" for t in parts.tools] if parts is not None else []
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
            "kernelTools": self._kernel_tools(tools),
            "agui": self._agui(),
        }
        if self.mcp is not None:
            body["mcp"] = self._mcp(self.mcp)
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

    @staticmethod
    def _mcp(mcp: McpServers) -> dict[str, Any]:
        """The MCP servers: per server ``status`` (``pending`` until the first run;
        ``needs_authorization`` with its ``authorizationUrl`` while an OAuth server waits for the
        person), ``tools`` (how many), ``error`` when skipped, ``names`` (agent tool name ->
        the server's name);
        ``notices`` says which servers were skipped, for the widget to show."""
        servers = mcp.info()
        notices = [
            f"MCP server '{key}' was skipped: {s['error']}"
            for key, s in servers.items()
            if s["status"] == "error"
        ]
        return {"servers": servers, "notices": notices}

    def leave_out_kernel_tools(self) -> None:
        """For a host without notebook kernels: the kernel tools go, before the agent runs."""
        self.kernels = False
        if self.parts is not None and self._runtime is None:
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
        if self.mcp is not None:
            await self.mcp.close()
        await self.store.close()
