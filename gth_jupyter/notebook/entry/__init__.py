"""The way in: the ``%gth`` magics and the ``GthChat`` widget they show.

``%gth`` / ``%%gth`` (``magics.py``) read the cell and either show a :class:`GthChat`
(``widget.py``), whose page talks AG-UI to the agent, or, where no front end renders widgets
(``front_end.py`` tells), run the turn headless (``headless/``). Everything the kernel keeps
for them lives in the kernel's host (``host/``).

Loaded on first use: ``%load_ext gth_jupyter`` imports the magics and the widget, nothing of the
agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .magics import GthMagics, load_ipython_extension, unload_ipython_extension
    from .widget import GthChat, chat

__all__ = ["GthChat", "GthMagics", "chat", "load_ipython_extension", "unload_ipython_extension"]

__getattr__ = lazy_names(
    __name__,
    widget=("GthChat", "chat"),
    magics=("GthMagics", "load_ipython_extension", "unload_ipython_extension"),
)
