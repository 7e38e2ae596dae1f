"""What a notebook write replaced, kept with its tool call and never sent to the model.

The page answers ``edit_cell`` with the change as a line diff for the model, and beside it
``undo``: ``{"before": the cell's whole source before the edit}``, which the Changes card's Undo
needs after a reload, in another tab or after a kernel restart. The server moves ``undo`` out of
the result into the ``ToolMessage``'s ``artifact`` (kept in the checkpoint; LangChain sends no
artifact to a provider), and the thread view gives it back on that tool message as ``undo``.
"""

from __future__ import annotations

import json
from typing import Any

from .names import NOTEBOOK_TOOLS

__all__ = ["UNDO_KEY", "split_undo", "undo_of"]

UNDO_KEY = "undo"
_WRITES = frozenset(NOTEBOOK_TOOLS[1:])  # insert_cell, edit_cell (read_notebook changes nothing)


def split_undo(name: str | None, content: Any) -> tuple[Any, dict[str, Any] | None]:
    """A write's result without its ``undo``, and the ``undo``; anything else as it came.
    Only an ``undo`` holding a string ``before`` is kept (what the page may send is bounded by
    the request's own size cap)."""
    if name not in _WRITES or not isinstance(content, str) or '"undo"' not in content:
        return content, None
    try:
        value = json.loads(content)
    except ValueError:
        return content, None
    if not isinstance(value, dict) or UNDO_KEY not in value:
        return content, None
    undo = value.pop(UNDO_KEY)
    rest = json.dumps(value, ensure_ascii=False)
    if not isinstance(undo, dict) or not isinstance(undo.get("before"), str):
        return rest, None
    return rest, {"before": undo["before"]}


def undo_of(artifact: Any) -> dict[str, Any] | None:
    """The ``undo`` a tool message's artifact keeps, if any."""
    undo = artifact.get(UNDO_KEY) if isinstance(artifact, dict) else None
    return undo if isinstance(undo, dict) else None
