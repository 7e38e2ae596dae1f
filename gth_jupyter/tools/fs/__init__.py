"""The file tools: what the agent reads and writes, confined to its workspace.

:func:`make_filesystem_tools` (``tools.py``) gives a command the tools its ``filesystem``
setting enables: the read tools (``_read.py``: files streamed under caps by ``_lines.py``,
listings and trees by ``_listing.py``), ``gth_read_binary`` (``binary.py``) and the write tools
(``_write.py``, edits by ``_edit.py``). Every path goes through a :class:`Workspace`
(``workspace.py``): inside the working directory once symlinks are resolved, not hidden by
``.aiignore`` (``aiignore.py``), opened without following a symlink swapped in after that check
(``nofollow.py``); the agent's own settings and what runs by itself are never written
(``protected.py``).

Loaded on first use: the tools' kinds (``tools/kinds.py``) read ``protected.py`` before the
tools are built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from ._read import READ_TOOLS
    from ._write import WRITE_TOOLS
    from .nofollow import PathDenied
    from .tools import filesystem_tool_names, make_filesystem_tools
    from .workspace import Workspace

__all__ = [
    "READ_TOOLS",
    "WRITE_TOOLS",
    "PathDenied",
    "Workspace",
    "filesystem_tool_names",
    "make_filesystem_tools",
]

__getattr__ = lazy_names(
    __name__,
    _read=("READ_TOOLS",),
    _write=("WRITE_TOOLS",),
    nofollow=("PathDenied",),
    workspace=("Workspace",),
    tools=("filesystem_tool_names", "make_filesystem_tools"),
)
