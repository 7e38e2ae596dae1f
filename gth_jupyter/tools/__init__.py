"""The agent's tools, as Gaunt Sloth configures them: built-ins, file tools, custom commands.

:func:`build_tools` turns a command's :class:`~gth_jupyter.config.EffectiveConfig` into the tool
list an agent is built with (``registry.py`` says in which order and how ``allowedTools`` filters).
"""

from gth_jupyter.tools.registry import build_tools

__all__ = ["build_tools"]
