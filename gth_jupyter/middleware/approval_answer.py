"""Reading the person's answer to an approval request.

The widget answers ``{"approved": true}``, ``{"approved": true, "editedArgs": {...}}`` or
``{"approved": false, "message"?: "why"}``; the AG-UI layer turns a cancelled interrupt into
``{"status": "cancelled"}``. LangChain's HITL decisions (``{"type": "approve"}``, ``{"type":
"edit", "edited_action": {"args": {...}}}``, ``{"type": "reject", "message"?: ...}``) are read
too. Anything else is a rejection: an answer the gate cannot read never runs a tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RESPONSE_SCHEMA", "Answer", "read_answer"]

RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "editedArgs": {"type": "object"},
    },
    "required": ["approved"],
}


@dataclass(frozen=True)
class Answer:
    approved: bool
    edited_args: dict[str, Any] | None = None
    message: str | None = None


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def read_answer(value: Any) -> Answer:
    """The decision ``value`` carries (see the module docstring)."""
    if value is True:
        return Answer(True)
    if not isinstance(value, dict) or value.get("status") == "cancelled":
        return Answer(False)
    if "approved" in value:
        edited = value.get("editedArgs")
        return Answer(
            value["approved"] is True,
            edited if isinstance(edited, dict) and value["approved"] is True else None,
            _text(value.get("message") or value.get("reason")),
        )
    kind = value.get("type")
    if kind == "approve":
        return Answer(True)
    if kind == "edit":
        action = value.get("edited_action") or value.get("editedAction") or {}
        args = action.get("args") if isinstance(action, dict) else None
        return Answer(True, args) if isinstance(args, dict) else Answer(False)
    return Answer(False, None, _text(value.get("message")) if kind == "reject" else None)
