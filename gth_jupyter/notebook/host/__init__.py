"""The in-kernel host: what the kernel keeps and serves for the notebook's chats.

Where no server page reaches the agent (VS Code, Colab), a widget's AG-UI requests travel over
its comm (``comm_transport.py``) to an agent the kernel runs (``kernel_agent.py``), on a loop
thread of its own; the agent's kernel tools reach this kernel in place (``kernel_access.py``).
The kernel also keeps the notebook's threads (``threads.py``) and the order of its ``%gth``
turns (``turns.py``), the browser tools a cell registered (``client_tools.py``), each chat's
cell output and its static copy (``cell_output.py``), and :class:`Session`, the agent run
headless from code.

A host beside :mod:`gth_jupyter.server`, never above it: both ask :mod:`gth_jupyter.agent` for
the agent and :mod:`gth_jupyter.agui` for the protocol. Names load on first use: the first
``%gth`` imports none of LangChain or LangGraph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .client_tools import client_tool, remove_client_tool
    from .comm_transport import CommTransport
    from .kernel_access import in_kernel_access
    from .session import Session

__all__ = ["CommTransport", "Session", "client_tool", "in_kernel_access", "remove_client_tool"]

_LAZY = {
    "CommTransport": "comm_transport",
    "Session": "session",
    "client_tool": "client_tools",
    "in_kernel_access": "kernel_access",
    "remove_client_tool": "client_tools",
}

__getattr__ = lazy_names(__name__, _LAZY)
