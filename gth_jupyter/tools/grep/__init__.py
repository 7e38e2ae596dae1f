"""``gth_grep``: a regular-expression search of the workspace's files.

:func:`make_grep_tool` (``tool.py``) runs ripgrep where it is installed, else the in-process
scanner (``_scan.py``: the same file set and output), whose matching runs in a worker process
(``_worker.py``) that is stopped when a pattern backtracks for too long (``_fallback.py``).
Files are reached through the workspace of the file tools (``tools/fs/``).

Loaded on first use: the worker imports its modules without loading the tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .tool import GrepArgs, make_grep_tool

__all__ = ["GrepArgs", "make_grep_tool"]

__getattr__ = lazy_names(__name__, tool=("GrepArgs", "make_grep_tool"))
