"""The notebook front end: the ``%gth`` magics, the chat widget, and the agent in the kernel.

- ``%gth`` / ``%%gth`` (``magics.py``) and :func:`chat` show a :class:`GthChat` (``widget.py``),
  an anywidget whose page talks AG-UI to the agent: over HTTP to the server extension, or over
  the widget's comm (``comm_transport.py``) to an agent the kernel runs (``kernel_agent.py``);
- :func:`client_tool` (``client_tools.py``) adds a browser tool every chat declares;
- :class:`Session` (``session.py``) runs the agent headless in the kernel.

This package is a host beside :mod:`gth_jupyter.server`, never above it: both ask
:mod:`gth_jupyter.agent` for the agent and :mod:`gth_jupyter.agui` for the protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .client_tools import client_tool, remove_client_tool
    from .magics import GthMagics
    from .session import Session
    from .widget import GthChat, chat

__all__ = ["GthChat", "GthMagics", "Session", "chat", "client_tool", "remove_client_tool"]

# Loaded on first use: `%load_ext gth_jupyter` should not import the agent.
_LAZY = {
    "GthChat": "widget",
    "GthMagics": "magics",
    "Session": "session",
    "chat": "widget",
    "client_tool": "client_tools",
    "remove_client_tool": "client_tools",
}


__getattr__ = lazy_names(__name__, _LAZY)
