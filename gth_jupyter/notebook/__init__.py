"""The notebook side: the ``%gth`` magics, the chat widget, and the agent in the kernel.

Three parts, each a sub-package, from the ground up, over the static copy of a turn
(:mod:`gth_jupyter.copy`, which the server renders too):

- ``host/``: the in-kernel host, one typed ``KernelHost`` per kernel owning what the kernel
  keeps: the agent it runs for the comm transport, its loop thread and kernel access, the
  notebook's threads and turns, registered browser tools (:func:`client_tool`), chat outputs;
  and :class:`Session`, the agent run headless from code;
- ``headless/``: a ``%gth`` turn run in the kernel where no front end renders a widget
  (nbconvert, papermill);
- ``entry/``: the way in, ``%gth`` / ``%%gth`` (:class:`GthMagics`) and the :class:`GthChat`
  widget (:func:`chat`).

Each imports only the parts before it (``tests/test_layers.py``). The notebook side is a host
beside :mod:`gth_jupyter.server`, never above it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .entry.magics import GthMagics, load_ipython_extension, unload_ipython_extension
    from .entry.widget import GthChat, chat
    from .host.client_tools import client_tool, remove_client_tool
    from .host.session import Session

__all__ = [
    "GthChat",
    "GthMagics",
    "Session",
    "chat",
    "client_tool",
    "load_ipython_extension",
    "remove_client_tool",
    "unload_ipython_extension",
]

# Loaded on first use: `%load_ext gth_jupyter` should not import the agent.
# Each through its sub-package's face, which loads it from its module in turn.
__getattr__ = lazy_names(
    __name__,
    entry=("GthChat", "GthMagics", "chat", "load_ipython_extension", "unload_ipython_extension"),
    host=("Session", "client_tool", "remove_client_tool"),
)
