"""Assembling an agent for one command: its model, its tools and its middleware.

Every host asks this module, so an agent looks the same in the Jupyter extension, the
standalone server and the kernel. The model is the live one a ``.gsloth.config.py`` handed
over, else the one ``llm`` names (the offline demo when there is none). The tools come from
their sources in one order (the file tools ``filesystem`` chooses, the built-in tools, the
custom tools, provider server tools, then the tool objects of a ``.gsloth.config.py`` and any a
caller adds), with ``allowedTools`` applied last (see :mod:`gth_jupyter.tools.registry`). The
middleware is the approvals gate and the named middleware (see
:mod:`gth_jupyter.middleware.registry`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel

from ..config import EffectiveConfig
from ..middleware.registry import build_middleware
from ..models import describe_model, resolve_model
from ..tools.registry import Tool, build_tools

__all__ = ["NO_APPROVALS", "AgentParts", "llm_settings", "resolve_agent"]

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


def llm_settings(effective: EffectiveConfig) -> dict[str, Any] | None:
    """The ``llm`` section as the model resolver reads it (camelCase, unset keys left out)."""
    llm = effective.llm
    return None if llm is None else llm.model_dump(by_alias=True, exclude_none=True)


def resolve_agent(
    effective: EffectiveConfig,
    *,
    cwd: Path,
    model: BaseChatModel | None = None,
    extra_tools: Sequence[Tool] = (),
) -> AgentParts:
    """The parts of ``effective``'s agent working in ``cwd``; raises on a bad setting.

    ``model`` replaces the configured one and ``extra_tools`` join the other sources (both for
    embedders and tests)."""
    llm = llm_settings(effective)
    chosen = model or effective.live.llm or resolve_model(llm)
    described = describe_model(llm, chosen)
    tools = build_tools(effective, cwd=cwd, extra=extra_tools)
    middleware = build_middleware(
        effective,
        model=chosen,
        cwd=cwd,
        answers_approvals=effective.command not in NO_APPROVALS,
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
    )
