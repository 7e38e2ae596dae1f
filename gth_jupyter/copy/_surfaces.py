"""An A2UI surface as a static copy shows it: one line, its title and the values it held.

A surface's operations (v0.8 ``surfaceUpdate`` / ``dataModelUpdate`` and v0.9
``updateComponents`` / ``updateDataModel`` alike) give its components and data model; the
actions the person sent from it (``{"actionName", "surfaceId", "context"}`` messages) give the
values typed in. All of it is the model's or the person's text, shown as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._blocks import Line, as_list, cell_text

__all__ = ["surface_line"]


def _literal(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, dict):
        for key in _LITERALS:
            if key in value:
                return _literal(value[key])
    return None


_LITERALS = (
    "literalString",
    "literalNumber",
    "literalBoolean",
    "valueString",
    "valueNumber",
    "valueBoolean",
)


def _data_model(ops: Sequence[Any]) -> dict[str, Any]:
    """The top-level values the operations put in the surface's data model (by last key)."""
    model: dict[str, Any] = {}
    for op in ops:
        if not isinstance(op, dict):
            continue
        old = op.get("dataModelUpdate")
        if isinstance(old, dict):  # v0.8: contents [{key, valueString | ...}]
            for item in as_list(old.get("contents")):
                if isinstance(item, dict) and isinstance(item.get("key"), str):
                    model[item["key"]] = _literal(item)
        new = op.get("updateDataModel")
        if isinstance(new, dict):  # v0.9: {path, value}
            path = str(new.get("path") or "/").strip("/")
            if not path and isinstance(new.get("value"), dict):
                model.update(new["value"])
            elif path:
                model[path.rsplit("/", 1)[-1]] = new.get("value")
    return model


def _components(ops: Sequence[Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """``(id, type, props)`` of every component the operations define, v0.8 and v0.9 alike."""
    found = []
    for op in ops:
        if not isinstance(op, dict):
            continue
        body = op.get("surfaceUpdate") or op.get("updateComponents") or {}
        for c in as_list(body.get("components") if isinstance(body, dict) else None):
            if not isinstance(c, dict):
                continue
            comp = c.get("component")
            if isinstance(comp, dict) and len(comp) == 1:  # v0.8: {"TextField": {...}}
                kind, props = next(iter(comp.items()))
                found.append(
                    (str(c.get("id", "")), str(kind), props if isinstance(props, dict) else {})
                )
            elif isinstance(comp, str):  # v0.9: {"component": "TextField", ...props}
                found.append((str(c.get("id", "")), comp, c))
    return found


def surface_line(ops: Sequence[Any], actions: Sequence[Mapping[str, Any]]) -> Line:
    """One line for a surface: its title, and each field with the value it held (the values
    the person sent with an action from it, else those its data model gave)."""
    comps = _components(ops)
    texts = [
        (p.get("usageHint") or p.get("variant"), _literal(p.get("text")))
        for _, k, p in comps
        if k == "Text"
    ]
    title = next((t for hint, t in texts if t and str(hint or "").startswith("h")), None)
    title = title or next((t for _, t in texts if t), None) or "A form"
    sent: dict[str, Any] = _data_model(ops)
    for action in actions:
        context = action.get("context")
        if isinstance(context, dict):
            sent.update(context)
    fields = []
    for cid, kind, props in comps:
        if kind in ("Text", "Button", "Column", "Row", "Card", "List", "Divider", "Image"):
            continue
        label = _literal(props.get("label")) or cid
        bound = props.get("text") or props.get("value")
        path = bound.get("path") if isinstance(bound, dict) else None
        key = path.strip("/").rsplit("/", 1)[-1] if isinstance(path, str) else cid
        value = sent.get(key, sent.get(cid))
        fields.append(f"{label}: {cell_text(value) if value is not None else '(empty)'}")
    if not fields and sent:
        fields = [f"{k}: {cell_text(v)}" for k, v in sent.items()]
    rest = f" — {' · '.join(fields)}" if fields else ""
    return Line(f"{title}{rest}"[:2000], label="Form:", cls="gth-copy-surface")
