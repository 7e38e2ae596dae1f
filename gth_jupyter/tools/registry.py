"""The tools of this package, by source, and the rules that combine sources.

Each source is built from a command's configuration in a :class:`Workspace` (the root and its
``.aiignore``): :func:`filesystem_tools` (chosen by ``filesystem``), :func:`built_in_tools` (the
enabled ``builtInTools``, in the order written) and :func:`custom_tools` (``customTools``). The
agent's resolver (:mod:`gth_jupyter.agent.resolver`) puts them in order with the other sources,
keeps the first tool of each name (:func:`unique`: nothing can replace a built-in, since a custom
``read_file`` would escape its confinement) and applies ``allowedTools`` (:func:`allowed`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool

from gth_jupyter.config.effective import EffectiveConfig
from gth_jupyter.tools.checklist import make_checklist_tool
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.dev import DEV_TOOLS, make_dev_tool
from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.grep.tool import make_grep_tool
from gth_jupyter.tools.kernel_tools import (
    make_describe_variable_tool,
    make_list_variables_tool,
    make_run_python_tool,
)
from gth_jupyter.tools.kinds import KIND_KEY
from gth_jupyter.tools.shell import make_shell_tool
from gth_jupyter.tools.state import make_state_tool
from gth_jupyter.tools.status import make_status_tool
from gth_jupyter.tools.web_fetch import make_web_fetch_tool

__all__ = [
    "Tool",
    "allowed",
    "built_in_tools",
    "custom_tools",
    "filesystem_tools",
    "tool_name",
    "unique",
    "workspace_for",
]

log = logging.getLogger(__name__)

Tool = BaseTool | dict[str, Any]
#: The workspace, the whole builtInTools registry, and ``passEnv`` (for tools that start processes).
Context = tuple[Workspace, Mapping[str, Mapping[str, Any]], Sequence[str]]
Factory = Callable[[str, Mapping[str, Any], Context], BaseTool | None]


def _a2ui(name: str, settings: Mapping[str, Any], ctx: Context) -> BaseTool | None:
    from gth_jupyter.tools.a2ui import make_a2ui_tool

    tool = make_a2ui_tool()
    tool.metadata = {KIND_KEY: "inert", **(tool.metadata or {})}
    return tool


FACTORIES: dict[str, Factory] = {
    "gth_checklist": lambda name, s, ctx: make_checklist_tool(),
    "gth_grep": lambda name, s, ctx: make_grep_tool(ctx[0], s),
    "gth_web_fetch": lambda name, s, ctx: make_web_fetch_tool(s),
    "gth_status_update": lambda name, s, ctx: make_status_tool(),
    "gth_update_state": lambda name, s, ctx: make_state_tool(),
    "show_a2ui_surface": _a2ui,
    "run_shell_command": lambda name, s, ctx: make_shell_tool(ctx[0].root, s, pass_env=ctx[2]),
    "list_variables": lambda name, s, ctx: make_list_variables_tool(),
    "describe_variable": lambda name, s, ctx: make_describe_variable_tool(s),
    "run_python": lambda name, s, ctx: make_run_python_tool(s),
    **{
        dev: lambda name, s, ctx: make_dev_tool(
            name, s, ctx[1].get("run_shell_command", {}), ctx[0].root, pass_env=ctx[2]
        )
        for dev in DEV_TOOLS
    },
}


def tool_name(tool: Tool) -> str | None:
    """A tool's name; ``None`` for a server tool dict without one."""
    if isinstance(tool, BaseTool):
        return tool.name
    name = tool.get("name") or (tool.get("function") or {}).get("name")
    return name if isinstance(name, str) else None


def allowed(tools: Sequence[Tool], patterns: Sequence[str] | None) -> list[Tool]:
    """``tools`` filtered by ``allowedTools`` (``None``: no filter)."""
    if patterns is None:
        return list(tools)
    regexes = [re.compile(".*".join(re.escape(p) for p in pat.split("*"))) for pat in patterns]
    kept: list[Tool] = []
    for tool in tools:
        name = tool_name(tool)
        if name is None or any(r.fullmatch(name) for r in regexes):
            kept.append(tool)
    return kept


def workspace_for(effective: EffectiveConfig, cwd: Path) -> Workspace:
    """The root the tools of ``effective`` are confined to, with its ``.aiignore``."""
    aiignore = effective.aiignore
    return Workspace.at(cwd, aiignore.patterns, aiignore_enabled=aiignore.enabled is not False)


def filesystem_tools(effective: EffectiveConfig, ws: Workspace) -> list[BaseTool]:
    """The file tools ``filesystem`` chooses (with ``gth_read_binary`` among the reads when
    ``binaryFormats`` lists formats)."""
    return make_filesystem_tools(effective.filesystem, ws, effective.binary_formats)


def built_in_tools(effective: EffectiveConfig, ws: Workspace) -> list[BaseTool]:
    """The enabled ``builtInTools``, in the order written; unknown names are skipped."""
    registry = effective.built_in_tools
    tools: list[BaseTool] = []
    for name, settings in registry.items():
        factory = FACTORIES.get(name)
        if factory is None:
            log.info("Skipping %s: not a built-in tool of gth-jupyter", name)
            continue
        tool = factory(name, settings, (ws, registry, effective.pass_env))
        if tool is not None:
            tools.append(tool)
    return tools


def custom_tools(effective: EffectiveConfig, ws: Workspace) -> list[BaseTool]:
    """One tool per ``customTools`` entry."""
    return [
        make_custom_tool(name, spec, ws.root, pass_env=effective.pass_env)
        for name, spec in effective.custom_tools.items()
    ]


def unique(sources: Iterable[Tool]) -> list[Tool]:
    """The first tool of each name (a later one is skipped with a warning); unnamed server
    tools are all kept, each object once."""
    tools: list[Tool] = []
    names: set[str] = set()
    seen: set[int] = set()
    for tool in sources:
        name = tool_name(tool)
        if id(tool) in seen:
            continue
        if name is not None and name in names:
            log.warning("Tool %s is defined twice; keeping the first one", name)
            continue
        seen.add(id(tool))
        if name is not None:
            names.add(name)
        tools.append(tool)
    return tools
