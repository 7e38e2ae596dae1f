"""The in-kernel host: what the kernel keeps and serves for the notebook's chats.

One :class:`KernelHost` per kernel process (:func:`kernel_host`, ``_host.py``) owns all of
it, as :class:`~gth_jupyter.server.host.GthHost` does on the server. Where no server page reaches
the agent (VS Code, Colab), a widget's AG-UI requests travel over its comm
(``comm_transport.py``) to the agent the host builds, on a loop thread of its own (``loop.py``);
the agent's kernel tools reach this kernel in place (``kernel_access.py``). The host also keeps
the notebook's threads (``threads.py``) and the order of its ``%gth`` turns (``turns.py``), the
browser tools a cell registered (``client_tools.py``), each chat's cell output and its static
copy (``cell_output.py``), and what a chat's header says before any agent is built
(``label.py``). :class:`Session` is the agent run headless from code.

A host beside :mod:`gth_jupyter.server`, never above it: both ask :mod:`gth_jupyter.agent` for
the agent and :mod:`gth_jupyter.agui` for the protocol. Names load on first use: the first
``%gth`` imports none of LangChain or LangGraph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from ._host import KernelHost, kernel_host, reset_kernel_host
    from .client_tools import client_tool, remove_client_tool
    from .comm_transport import CommTransport
    from .kernel_access import in_kernel_access
    from .session import Session

__all__ = [
    "CommTransport",
    "KernelHost",
    "Session",
    "client_tool",
    "in_kernel_access",
    "kernel_host",
    "remove_client_tool",
    "reset_kernel_host",
]

__getattr__ = lazy_names(
    __name__,
    comm_transport=("CommTransport",),
    _host=("KernelHost", "kernel_host", "reset_kernel_host"),
    session=("Session",),
    client_tools=("client_tool", "remove_client_tool"),
    kernel_access=("in_kernel_access",),
)
