"""A2UI surfaces as AG-UI activity: each surface shown is one activity message.

A ``show_a2ui_surface`` result holds A2UI messages for one or more surfaces; the first showing of
a surface is an :class:`ActivitySnapshot` (``activityType`` ``a2ui-surface``, content
``{"a2ui_operations": [...]}``), a later one an :class:`ActivityDelta` on that content. The
:class:`SurfaceTracker` follows one thread; :func:`thread_activities` rebuilds them from history.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from .messages import tool_content_text
from .shared_state import json_patch

__all__ = [
    "A2UI_ACTIVITY",
    "SURFACE_TOOL",
    "ActivityDelta",
    "ActivitySnapshot",
    "SurfaceTracker",
    "json_values",
    "surface_operations",
    "thread_activities",
]


@dataclass(frozen=True, slots=True)
class ActivitySnapshot:
    """An activity message (an A2UI surface shown) with its whole content."""

    message_id: str
    activity_type: str
    content: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ActivityDelta:
    """A change of an activity message's content, as RFC 6902 JSON Patch operations."""

    message_id: str
    activity_type: str
    patch: list[dict[str, Any]]


#: The tool whose results are A2UI surfaces, and the AG-UI activity type they travel as.
SURFACE_TOOL = "show_a2ui_surface"
A2UI_ACTIVITY = "a2ui-surface"


def json_values(text: str) -> list[Any]:
    """Newline-separated or concatenated JSON values, as Gaunt Sloth's UI parses A2UI messages;
    raises ``json.JSONDecodeError`` at the first value that is not JSON."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    index, end = 0, len(text)
    while index < end:
        while index < end and text[index] in " \t\r\n,":
            index += 1
        if index >= end:
            break
        value, index = decoder.raw_decode(text, index)
        values.append(value)
    return values


def surface_operations(text: str) -> dict[str, list[Any]]:
    """A2UI messages (JSON Lines or concatenated objects) grouped by ``surfaceId``, in order;
    ``{}`` for text that is not A2UI."""
    try:
        values = json_values(text)
    except ValueError:
        return {}
    found: dict[str, list[Any]] = {}
    for value in values:
        body = next(iter(value.values()), None) if isinstance(value, dict) else None
        surface = body.get("surfaceId") if isinstance(body, dict) else None
        if not isinstance(surface, str):
            return {}
        found.setdefault(surface, []).append(value)
    return found


class SurfaceTracker:
    """The A2UI surfaces of one thread, each one activity message whose content is
    ``{"a2ui_operations": [...]}``, every operation shown for that surface so far. The message
    id is stable: ``<id of the tool call that first showed the surface>-a2ui-<surfaceId>``."""

    def __init__(self) -> None:
        self.surfaces: dict[str, tuple[str, list[Any]]] = {}

    def show(self, tool_call_id: str, content: str) -> list[ActivitySnapshot | ActivityDelta]:
        """The activity items one successful ``show_a2ui_surface`` result adds."""
        items: list[ActivitySnapshot | ActivityDelta] = []
        for surface, ops in surface_operations(content).items():
            known = self.surfaces.get(surface)
            if known is None:
                message_id = f"{tool_call_id}-a2ui-{surface}"
                self.surfaces[surface] = (message_id, list(ops))
                content_ = {"a2ui_operations": list(ops)}
                items.append(ActivitySnapshot(message_id, A2UI_ACTIVITY, content_))
            else:
                message_id, shown = known
                patch = json_patch({"a2ui_operations": shown}, {"a2ui_operations": shown + ops})
                shown.extend(ops)
                items.append(ActivityDelta(message_id, A2UI_ACTIVITY, patch))
        return items

    def show_message(self, message: BaseMessage) -> list[ActivitySnapshot | ActivityDelta]:
        """``show`` for a checkpointed tool message; ``[]`` for any other message."""
        if (
            isinstance(message, ToolMessage)
            and message.name == SURFACE_TOOL
            and message.status != "error"
        ):
            return self.show(message.tool_call_id, tool_content_text(message.content))
        return []


def thread_activities(messages: list[BaseMessage]) -> dict[str, list[ActivitySnapshot]]:
    """The activity messages a thread's history holds, by the id of the message each follows
    (the tool message that first showed it), each with its final content."""
    tracker = SurfaceTracker()
    after: dict[str, list[ActivitySnapshot]] = {}
    for message in messages:
        for item in tracker.show_message(message):
            if isinstance(item, ActivitySnapshot):
                after.setdefault(message.id or "", []).append(item)
    final = {message_id: ops for message_id, ops in tracker.surfaces.values()}
    return {
        key: [
            ActivitySnapshot(
                i.message_id, i.activity_type, {"a2ui_operations": final[i.message_id]}
            )
            for i in items
        ]
        for key, items in after.items()
    }
