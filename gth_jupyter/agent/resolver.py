"""Assembling an agent for one command: its model, its tools and its middleware.

Every host asks this module, so an agent looks the same in the Jupyter extension, the
standalone server and the kernel. The model is the live one a ``.gsloth.config.py`` handed
over, else the one ``llm`` names (the offline demo when there is none). The tools come from
their sources in one order (:func:`resolve_tools`); the middleware is the approvals gate and the
named middleware (see :mod:`gth_jupyter.middleware.registry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from ..config.effective import EffectiveConfig
from ..middleware.registry import build_middleware
from ..models.resolve import describe_model, resolve_model
from ..tools.kernel_tools import KERNEL_TOOLS
from ..tools.kinds import adopt
from ..tools.registry import (
    Tool,
    allowed,
    built_in_tools,
    custom_tools,
    filesystem_tools,
    tool_name,
    unique,
    workspace_for,
)
from .pricing import Pricer

__all__ = ["NO_APPROVALS", "AgentParts", "llm_settings", "resolve_agent", "resolve_tools"]

#: Commands that answer no approvals (Gaunt Sloth's ``api``: nobody is there to click).
NO_APPROVALS = frozenset({"api"})


@dataclass(frozen=True)
class AgentParts:
    """What a :class:`~gth_jupyter.agent.runtime.Runtime` is built from."""

    model: BaseChatModel
    tools: list[Tool]
    middleware: list[AgentMiddleware]
    system_prompt: str | None
    recursion_limit: int
    provider: str
    model_name: str | None
    offline: bool
    #: What the run's tokens cost (the configuration's ``pricing``, then the price list).
    pricer: Pricer = field(default_factory=Pricer)


def llm_settings(effective: EffectiveConfig) -> dict[str, Any] | None:
    """The ``llm`` section as the model resolver reads it (camelCase, unset keys left out)."""
    llm = effective.llm
    return None if llm is None else llm.model_dump(by_alias=True, exclude_none=True)


def _a2a_tools(effective: EffectiveConfig) -> list[Tool]:
    if not effective.a2a_agents:
        return []  # the A2A SDK is imported only when agents are configured
    from ..tools.a2a import make_a2a_tools

    return list(make_a2a_tools(effective.a2a_agents))


def _config_tool(tool: Tool) -> Tool:
    """A ``.gsloth.config.py`` tool, whose metadata cannot set our keys: whatever kind it
    claims (``gth_kind: "inert"``...), it is ``other`` to the approvals gate."""
    if isinstance(tool, BaseTool):
        return adopt(tool, "other")
    return tool


def resolve_tools(
    effective: EffectiveConfig,
    *,
    cwd: Path,
    extra: Sequence[Tool] = (),
    kernel_tools: bool = True,
    mcp: Sequence[Tool] = (),
) -> list[Tool]:
    """Every tool ``effective`` enables for an agent working in ``cwd``.

    The sources, in order: the file tools ``filesystem`` chooses, the enabled ``builtInTools``
    (in the order written), the ``customTools``, provider server tools (``tools`` dicts, bound
    to the model untouched), the tools of the ``mcpServers`` (``mcp``: loaded by the host's
    registry, which needs the running loop; see :mod:`gth_jupyter.tools.mcp.servers`), one tool per
    ``a2aAgents`` entry (``a2a_agent_<agentId>``, :mod:`gth_jupyter.tools.a2a`), the tool objects
    of a ``.gsloth.config.py`` (kind ``other``, whatever their metadata claims), then ``extra``.
    A name already taken is skipped with a warning, so nothing replaces a built-in. ``allowedTools``
    applies last, to all of them: an exact name or a ``*`` glob keeps a tool, a tool without a
    name (some server tools) is always kept, and ``[]`` means no tools: nothing is built.
    ``kernel_tools=False`` (a host with no notebook kernels) leaves the kernel tools out."""
    if effective.allowed_tools == []:
        return []
    ws = workspace_for(effective, cwd)
    built_in = built_in_tools(effective, ws)
    if not kernel_tools:
        built_in = [t for t in built_in if t.name not in KERNEL_TOOLS]
    sources: list[Tool] = [
        *filesystem_tools(effective, ws),
        *built_in,
        *custom_tools(effective, ws),
        *effective.server_tools,
        *mcp,
        *_a2a_tools(effective),
        *(_config_tool(t) for t in effective.python_tools if t is not None),
        *extra,
    ]
    return allowed(unique(sources), effective.allowed_tools)


def resolve_agent(
    effective: EffectiveConfig,
    *,
    cwd: Path,
    model: BaseChatModel | None = None,
    extra_tools: Sequence[Tool] = (),
    kernel_tools: bool = True,
) -> AgentParts:
    """The parts of ``effective``'s agent working in ``cwd``; raises on a bad setting.

    ``model`` replaces the configured one and ``extra_tools`` join the other sources (both for
    embedders and tests); ``kernel_tools=False`` is for a host without notebook kernels."""
    llm = llm_settings(effective)
    chosen = model or effective.live.llm or resolve_model(llm)
    described = describe_model(llm, chosen)
    tools = resolve_tools(effective, cwd=cwd, extra=extra_tools, kernel_tools=kernel_tools)
    middleware = build_middleware(
        effective,
        model=chosen,
        cwd=cwd,
        answers_approvals=effective.command not in NO_APPROVALS,
        tool_names={name for t in tools if (name := tool_name(t))},
    )
    return AgentParts(
        model=chosen,
        tools=tools,
        middleware=middleware,
        system_prompt=effective.system_prompt,
        recursion_limit=effective.recursion_limit,
        provider=described.provider,
        model_name=described.model,
        offline=described.offline,
        pricer=Pricer(effective.pricing),
    )
