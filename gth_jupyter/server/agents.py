"""The agents a host serves, built from the configuration on first use.

Both hosts (the Jupyter extension and the standalone server) own one ``AgentRegistry``. It
opens the checkpointer lazily (the SQLite saver needs the running loop) and keeps a build error
instead of raising it, so a bad model setting shows up as a clear refusal on the endpoint rather
than as a server that will not start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ag_ui.core import PROTOCOL_VERSION
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel

from ..agent.checkpoint import CheckpointStore
from ..agent.runtime import Runtime
from ..agui import errors
from ..config import EffectiveConfig, GthConfig
from ..middleware.image_injection import FrontendImageInjectionMiddleware
from ..middleware.registry import build_middleware
from ..models import describe_model, resolve_model
from ..tools.registry import Tool, build_tools, tool_name

log = logging.getLogger(__name__)

DEFAULT_AGENT = "default"
# Gaunt Sloth's api command answers no approvals: nobody is there to click.
NO_APPROVALS = frozenset({"api"})


class AgentUnavailableError(Exception):
    code = "agent_unavailable"


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
    ) -> None:
        self.config = config
        self.command = command
        self.store = store
        self.cwd = (cwd or Path.cwd()).resolve()
        self.effective: EffectiveConfig = config.for_command(command)
        self._model = model
        self._extra_tools = list(tools or [])
        self._runtime: Runtime | None = None
        self._lock = asyncio.Lock()
        self._busy: set[str] = set()
        self.build_error: Exception | None = None
        self._tools: list[Tool] = []
        self._middleware: list[AgentMiddleware] = []
        try:
            # A .gsloth.config.py may hand over a live model object.
            live_model = self.effective.live.llm
            self._model = model or live_model or resolve_model(_llm_dict(self.effective))
            self._tools = build_tools(self.effective, cwd=self.cwd, extra=self._extra_tools)
            self._middleware = [
                *build_middleware(
                    self.effective,
                    model=self._model,
                    cwd=self.cwd,
                    answers_approvals=command not in NO_APPROVALS,
                ),
                *image_middleware(self.effective, self._model),
            ]
        except Exception as exc:  # reported by /info and refused by /run
            log.error("gth-jupyter: the agent could not be built: %s", exc)
            self.build_error = exc

    @property
    def names(self) -> list[str]:
        return [DEFAULT_AGENT]

    async def runtime(self, name: str) -> Runtime:
        if name not in self.names:
            raise errors.agent_not_found(name, self.names)
        if self.build_error is not None or self._model is None:
            raise errors.ProtocolError(
                503,
                "agent_unavailable",
                f"The agent could not be built from the configuration: {self.build_error}",
            )
        if self._runtime is None:
            async with self._lock:
                if self._runtime is None:
                    self._runtime = Runtime(
                        self._model,
                        self._tools,
                        checkpointer=await self.store.get(),
                        middleware=self._middleware,
                        system_prompt=self.effective.system_prompt,
                        recursion_limit=self.effective.recursion_limit,
                        busy_threads=self._busy,
                    )
        return self._runtime

    def info(self) -> dict[str, Any]:
        llm = self.effective.llm
        provider: str | None
        model: str | None
        if self._model is not None:
            described = describe_model(_llm_dict(self.effective), self._model)
            provider, model, offline = described.provider, described.model, described.offline
        else:
            provider = llm.type if llm else None
            model = llm.model if llm else None
            offline = False
        body: dict[str, Any] = {
            "status": "ok" if self.build_error is None else "error",
            "provider": provider,
            "model": model,
            "offline": offline,
            "protocolVersion": PROTOCOL_VERSION,
            "command": self.command,
            "agents": [
                {"name": n, "tools": [tool_name(t) or "?" for t in self._tools]} for n in self.names
            ],
        }
        if self.build_error is not None:
            body["error"] = {"code": "agent_unavailable", "message": str(self.build_error)}
        return body

    async def close(self) -> None:
        await self.store.close()


def image_middleware(effective: EffectiveConfig, model: BaseChatModel) -> list[AgentMiddleware]:
    """``frontend-image-injection`` where the configuration names it (the rest is built by
    ``build_middleware``)."""
    provider = effective.llm.type if effective.llm else model._llm_type
    return [
        FrontendImageInjectionMiddleware(
            provider=provider, tool_name=str(entry.get("toolName") or "capture_image")
        )
        for entry in effective.middleware
        if entry.get("name") == "frontend-image-injection"
    ]


def _llm_dict(effective: EffectiveConfig) -> dict[str, Any] | None:
    llm = effective.llm
    if llm is None:
        return None
    return llm.model_dump(by_alias=True, exclude_none=True)
