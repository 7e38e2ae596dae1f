"""The agent's tools, as Gaunt Sloth configures them: built-ins, file tools, custom commands.

``registry.py`` builds each source of tools from a command's
:class:`~gth_jupyter.config.EffectiveConfig` and holds the rules that combine sources (first name
wins, ``allowedTools``); the agent's resolver (:mod:`gth_jupyter.agent.resolver`) puts the sources
in order, reading their builders from there. This face names a tool, its name, the
``allowedTools`` rule and the :class:`Workspace`: every tool that touches files stays inside its
workspace and ``.aiignore``.

Three groups are sub-packages of their own: the file tools and their workspace (``fs/``),
``gth_grep`` (``grep/``) and MCP servers (``mcp/``); the other tools are one module each.
"""

from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.registry import Tool, allowed, tool_name

__all__ = ["Tool", "Workspace", "allowed", "tool_name"]
