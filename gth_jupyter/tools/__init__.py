"""The agent's tools, as Gaunt Sloth configures them: built-ins, file tools, custom commands.

``registry.py`` builds each source of tools from a command's
:class:`~gth_jupyter.config.EffectiveConfig` and holds the rules that combine sources (first name
wins, ``allowedTools``); the agent's resolver (:mod:`gth_jupyter.agent.resolver`) puts the sources
in order. Every tool that touches files stays inside its :class:`Workspace` and ``.aiignore``.

Three groups are sub-packages of their own: the file tools and their workspace (``fs/``),
``gth_grep`` (``grep/``) and MCP servers (``mcp/``); the other tools are one module each.
"""

from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.registry import (
    Tool,
    allowed,
    built_in_tools,
    custom_tools,
    filesystem_tools,
    tool_name,
    unique,
    workspace_for,
)

__all__ = [
    "Tool",
    "Workspace",
    "allowed",
    "built_in_tools",
    "custom_tools",
    "filesystem_tools",
    "tool_name",
    "unique",
    "workspace_for",
]
