"""The shared (AG-UI) state of a thread: its channel, how writes merge, how changes are told.

``RunAgentInput.state`` and tools write the graph channel :data:`STATE_KEY`; :func:`merge_state`
is its reducer (RFC 7386 JSON Merge Patch, or a whole replacement). A run that uses state streams
a :class:`StateSnapshot` at its start and end and a :class:`StateDelta` (RFC 6902 JSON Patch, from
:func:`json_patch`) for each change. Plain data, no LangGraph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "REPLACE_STATE",
    "STATE_KEY",
    "StateDelta",
    "StateSnapshot",
    "json_patch",
    "merge_state",
]


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """The thread's whole shared state (sent at the start and end of a run that uses it)."""

    snapshot: dict[str, Any]


@dataclass(frozen=True, slots=True)
class StateDelta:
    """A change of the shared state, as RFC 6902 JSON Patch operations."""

    delta: list[dict[str, Any]]


#: The graph channel holding the thread's shared (AG-UI) state, a JSON object.
STATE_KEY = "gth_state"
#: A write ``{REPLACE_STATE: value}`` to the state channel replaces the state with ``value``
#: (the client's state at run start); any other write is merged into it.
REPLACE_STATE = "$gth_replace"


def merge_state(left: Any, right: Any) -> dict[str, Any]:
    """The state channel's reducer: ``right`` merged into ``left`` as an RFC 7386 JSON Merge
    Patch (objects merge key by key, ``null`` deletes a key, anything else replaces), or
    ``right[REPLACE_STATE]`` when ``right`` is a replacement."""
    base = left if isinstance(left, dict) else {}
    if not isinstance(right, dict):
        return base
    if REPLACE_STATE in right:
        value = right[REPLACE_STATE]
        return dict(value) if isinstance(value, dict) else {}
    return _merge_patch(base, right)


def _merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            old = out.get(key)
            out[key] = _merge_patch(old if isinstance(old, dict) else {}, value)
        else:
            out[key] = value
    return out


def _pointer(key: str | int) -> str:
    return "/" + str(key).replace("~", "~0").replace("/", "~1")


def json_patch(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    """RFC 6902 operations turning ``old`` into ``new`` (JSON values): objects are compared key
    by key, a list that only grew gets ``add`` operations at its end, anything else that
    differs is replaced whole. Small rather than minimal; ``[]`` when they are equal."""
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": path + _pointer(key)})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": path + _pointer(key), "value": value})
            else:
                ops += json_patch(old[key], value, path + _pointer(key))
        return ops
    if isinstance(old, list) and isinstance(new, list) and new[: len(old)] == old:
        return [{"op": "add", "path": f"{path}/-", "value": v} for v in new[len(old) :]]
    return [{"op": "replace", "path": path, "value": new}]
