r"""A turn's changes to the notebook in its static copy, as the widget's Changes card lists
them (``js/src/view/changes.js``): one line per cell ``insert_cell`` or ``edit_cell`` changed,
``+ cell 8 (code, ran as [12])``, ``~ cell 3 (markdown, +4 \N{MINUS SIGN}1)``, so a saved or
shared notebook says what the agent changed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._blocks import json_object

__all__ = ["change_line", "changes_lines"]


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def change_line(name: str, arguments: str, result: str | None) -> str | None:
    """The line for one call; ``None`` for a call that changed nothing (an error, a read)."""
    if name not in ("insert_cell", "edit_cell"):
        return None
    done = json_object(result)
    if done is None or "error" in done or not isinstance(done.get("cell_id"), str):
        return None
    args = json_object(arguments) or {}
    kind = "markdown" if args.get("cell_type") == "markdown" else "code"
    index = _whole(done.get("index"))
    where = f"cell {done['cell_id'] if index is None else index}"
    if name == "insert_cell":
        ran = _whole(done.get("execution_count"))
        return f"+ {where} ({kind}{'' if ran is None else f', ran as [{ran}]'})"
    added, removed = (_whole(done.get(k)) or 0 for k in ("added", "removed"))
    return f"~ {where} ({kind}, +{added} \N{MINUS SIGN}{removed})"


def changes_lines(calls: Iterable[tuple[str, str, str | None]]) -> list[str]:
    """``Changes · N cells`` and a line per change, from ``(name, arguments, result)`` in order;
    nothing when no call changed a cell."""
    lines = [line for call in calls if (line := change_line(*call)) is not None]
    if not lines:
        return []
    return [f"Changes · {len(lines)} cell{'' if len(lines) == 1 else 's'}", *lines]
