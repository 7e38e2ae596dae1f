"""Tool calls and A2UI surfaces as a static copy shows them: what the widget's cards show.

- ``list_variables`` and ``describe_variable``: their tables (``js/src/view/kernelcards.js``);
- ``run_python``: its code, the text it printed, its value, its error, and its plots;
- ``capture_image``: a placeholder (a photo of the person is not kept in the file unless
  ``jupyter.savePhotos`` is set), or the photo;
- ``gth_read_binary``: the file's name and type, and the image when it is one;
- an approval: what was decided (rejected, refused, edited), or that it waits;
- any other tool: its result, cut as the widget's preview is.

Every value here came from the model, the kernel or the browser: it goes into blocks as text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from ..contract.names import NOTEBOOK_TOOLS, PHOTO_PLACEHOLDER
from ..contract.text import strip_ansi
from ._blocks import (
    Block,
    Card,
    Code,
    Image,
    Line,
    Note,
    Table,
    as_list,
    cell_text,
    cut,
    js_number,
    json_object,
)
from ._notebook import notebook_args, notebook_result
from .markdown import inline_image_url

__all__ = ["PHOTO_NOTE", "ToolCall", "tool_card"]

PHOTO_NOTE = "A photo was taken (not saved in the notebook; set jupyter.savePhotos to keep it)."
#: The widget's result preview length, and the caps a copy puts on a tool's longer texts.
PREVIEW_CHARS = 600
ARGS_CHARS = 160
OUTPUT_CHARS = 6000
CODE_CHARS = 20000
MAX_ROWS = 50
MAX_COLS = 20
_STATUS = {"ok": "done", "error": "error", "timeout": "timed out"}
_CODE_TOOLS = frozenset({"run_python", "insert_cell", "edit_cell"})
_WAITING = {"approval": "awaiting approval", "browser": "waiting for the browser"}


def _size(n: Any) -> str:
    """Bytes as the widget's ``humanBytes`` writes them (``js/src/view/kernelcards.js``): halves
    rounded up, as JavaScript's ``toFixed`` and ``Math.round`` do."""
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or n < 0:
        return ""
    units = ["B", "KB", "MB", "GB", "TB"]
    i, v = 0, float(n)
    while v >= 1024 and i < len(units) - 1:
        v, i = v / 1024, i + 1
    if i == 0:
        return f"{js_number(v)} B"
    step = Decimal("0.1") if v < 10 else Decimal(1)
    return f"{Decimal(v).quantize(step, ROUND_HALF_UP)} {units[i]}"


def _shape(v: Mapping[str, Any]) -> str:
    if isinstance(v.get("shape"), list):
        return "\N{MULTIPLICATION SIGN}".join(cell_text(s) for s in v["shape"])
    return f"len {v['length']}" if isinstance(v.get("length"), int) else ""


class ToolCall:
    """One call as the messages tell it: its arguments, its result, and what it waits on."""

    def __init__(self, call_id: str, name: str, arguments: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments = arguments
        self.result: str | None = None
        self.error: str | None = None
        self.waiting = ""  # "approval" or "browser" while an interrupt holds it

    @property
    def args(self) -> dict[str, Any]:
        return json_object(self.arguments) or {}


def _short_args(call: ToolCall) -> str:
    args = {
        k: v
        for k, v in call.args.items()
        if not (call.name in _CODE_TOOLS and k in ("code", "source", "justification"))
    }
    if not args:
        return ""
    text = json.dumps(args, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= ARGS_CHARS else text[: ARGS_CHARS - 1] + "…"


def _variables(v: Mapping[str, Any]) -> list[Block]:
    found = [x for x in v.get("variables", []) if isinstance(x, dict)]
    rows = []
    for x in found[: MAX_ROWS * 2]:
        cols = [c for c in as_list(x.get("columns")) if isinstance(c, dict)]
        columns = ", ".join(
            f"{cell_text(c.get('name'))}: {cell_text(c.get('dtype'))}" for c in cols[:6]
        )
        if len(cols) > 6:
            columns += f", … +{len(cols) - 6} more"
        rows.append(
            [
                cell_text(x.get("name")),
                cell_text("" if x.get("type") is None else x["type"]),
                _shape(x),
                _size(x.get("size_bytes")),
                columns,
            ]
        )
    total = v.get("total") if isinstance(v.get("total"), int) else len(found)
    parts: list[Block] = [Table(["Name", "Type", "Shape", "Size", "Columns"], rows)] if rows else []
    summary = f"{total} variable{'' if total == 1 else 's'}"
    if v.get("next_offset") is not None or len(found) > len(rows):
        summary = f"{len(rows)} of {total} variables shown."
    parts.append(Line(summary if rows else "No variables."))
    return parts


def _split_table(t: Any, caption: str, name: str) -> Table | None:
    if not isinstance(t, dict) or not isinstance(t.get("data"), list):
        return None
    columns = t["columns"] if isinstance(t.get("columns"), list) else [name or "value"]
    data = [
        r if isinstance(r, list) and isinstance(t.get("columns"), list) else [r] for r in t["data"]
    ]
    index = t["index"] if isinstance(t.get("index"), list) else list(range(len(data)))
    cols = columns[:MAX_COLS]
    rows = [
        [
            cell_text(index[i] if i < len(index) else i),
            *(cell_text(r[j]) if j < len(r) else "" for j in range(len(cols))),
        ]
        for i, r in enumerate(data[:MAX_ROWS])
    ]
    more = []
    if len(data) > MAX_ROWS:
        more.append(f"{len(data) - MAX_ROWS} more rows")
    if len(columns) > MAX_COLS:
        more.append(f"{len(columns) - MAX_COLS} more columns")
    label = f"{caption} ({', '.join(more)} not shown)" if more else caption
    return Table(["", *(cell_text(c) for c in cols)], rows, caption=label)


def _describe(v: Mapping[str, Any]) -> list[Block]:
    context = v.get("data_context") if isinstance(v.get("data_context"), str) else ""
    bits = [
        cell_text(v.get("name")),
        cell_text(v.get("type")),
        _shape(v),
        _size(v.get("size_bytes")),
    ]
    if context:
        bits.append(f"data context: {context}")
    parts: list[Block] = [Line(" · ".join(b for b in bits if b))]
    if isinstance(v.get("columns"), list):
        nulls = v["null_counts"] if isinstance(v.get("null_counts"), dict) else {}
        cols = [c for c in v["columns"] if isinstance(c, dict)]
        rows = [
            [
                cell_text(c.get("name")),
                cell_text(c.get("dtype")),
                cell_text(nulls.get(c.get("name"), "") if isinstance(c.get("name"), str) else ""),
            ]
            for c in cols[:MAX_ROWS]
        ]
        parts.append(Table(["Column", "Dtype", "Nulls"], rows))
    for key, caption in (("describe", "Summary statistics"), ("head", "First rows")):
        table = _split_table(v.get(key), caption, cell_text(v.get("name")))
        if table is not None:
            parts.append(table)
    if isinstance(v.get("head"), list):
        parts.append(Code(cut("\n".join(cell_text(x) for x in v["head"]), OUTPUT_CHARS)))
    if isinstance(v.get("repr"), str):
        parts.append(Code(cut(v["repr"], OUTPUT_CHARS)))
    if context == "schema":
        parts.append(Note("Only the schema is shared with the agent (data context: schema)."))
    return parts


def _run_python(v: Mapping[str, Any]) -> list[Block]:
    def clean(s: Any) -> str:
        return strip_ansi(s) if isinstance(s, str) else ""

    parts: list[Block] = []
    if isinstance(v.get("userEdited"), str):
        parts.append(Note("Approved with your edits: it ran the code as you changed it."))
    elapsed = v.get("elapsed")
    took = f" in {elapsed:.2f} s" if isinstance(elapsed, (int, float)) else ""
    parts.append(
        Line(f"{_STATUS.get(str(v.get('status')), str(v.get('status')))}{took}", label="Ran:")
    )
    displays = [clean(d) for d in as_list(v.get("displays")) if isinstance(d, str)]
    for text in (clean(v.get("stdout")), clean(v.get("stderr")), clean(v.get("result")), *displays):
        if text:
            parts.append(Code(cut(text, OUTPUT_CHARS), cls="gth-copy-output"))
    err = v.get("error")
    if isinstance(err, dict):
        tb = err.get("traceback")
        tb = "\n".join(str(t) for t in tb) if isinstance(tb, list) else clean(tb)
        text = f"{clean(err.get('ename'))}: {clean(err.get('evalue'))}" + (
            f"\n{clean(tb)}" if tb else ""
        )
        parts.append(Code(cut(text, OUTPUT_CHARS), cls="gth-copy-error"))
    for img in as_list(v.get("images")):
        url = (
            inline_image_url(img.get("mimeType"), img.get("data"))
            if isinstance(img, dict)
            else None
        )
        parts.append(Image(url, "Plot from run_python") if url else Note("An image was not kept."))
    if isinstance(v.get("note"), str) and v["note"]:
        parts.append(Note(v["note"]))
    return parts


def _decision(text: str) -> str:
    """What an approval decided, from the result the gate gave the model ("" when none)."""
    if (
        text.startswith(("The user rejected the", "Execution of '"))
        or "was rejected by user" in text
    ):
        said = text.split("The user said: ", 1)
        why = said[1].split(" Do not retry", 1)[0] if len(said) == 2 else ""
        return "Rejected: it did not run." + (f" You said: {why}" if why else "")
    if text.startswith(("Refused:", "Not run:")):
        return text.split(" Do not retry", 1)[0]
    return ""


def tool_card(call: ToolCall, *, save_photos: bool) -> Card:
    """The card for one call, as far as the thread has got with it."""
    args = call.args
    card = Card(call.name, "done", _short_args(call))
    if call.name == "run_python" and isinstance(args.get("code"), str):
        if isinstance(args.get("justification"), str) and args["justification"]:
            card.parts.append(Line(args["justification"], cls="gth-copy-justification"))
        card.parts.append(Code(cut(args["code"], CODE_CHARS), "python"))
    card.parts.extend(notebook_args(call.name, args))
    if call.result is None and call.error is None:
        card.status = _WAITING.get(call.waiting, "no result")
        return card
    text = call.error if call.error is not None else call.result or ""
    value = json_object(text)
    decided = _decision(text)
    failed = call.error is not None or (value is not None and isinstance(value.get("error"), str))
    card.status = "error" if failed else "done"
    if decided:
        card.status = "not run"
        card.parts.append(Line(decided, label="Approval:"))
        return card
    drawn: list[Block] | None = None
    if value is not None and not failed:
        if call.name == "list_variables" and isinstance(value.get("variables"), list):
            drawn = _variables(value)
        elif call.name == "describe_variable" and isinstance(value.get("name"), str):
            drawn = _describe(value)
        elif call.name == "run_python" and isinstance(value.get("status"), str):
            drawn = _run_python(value)
            if value["status"] in ("error", "timeout"):
                card.status = _STATUS[value["status"]]
        elif call.name in NOTEBOOK_TOOLS:
            drawn = notebook_result(call.name, value)
            if drawn is not None and call.name == "insert_cell" and "status" in value:
                drawn += _run_python(value)  # a cell that ran: its outputs, as run_python's
    if drawn is not None:
        card.parts.extend(drawn)
        return card
    image = inline_image_url(value.get("mimeType"), value.get("data")) if value else None
    if image is not None:
        if call.name == "capture_image":
            card.parts.append(
                Image(image, "Photo from capture_image") if save_photos else Note(PHOTO_NOTE)
            )
        else:
            card.parts.append(Image(image, f"Image from {call.name}"))
        return card
    if call.name == "capture_image" and text.startswith(PHOTO_PLACEHOLDER):
        card.parts.append(Note(PHOTO_NOTE))  # the photo's bytes were not kept with the thread
        return card
    if call.name == "gth_read_binary" and text.startswith("gth_read_binary;"):
        card.parts.extend(_binary(text))
        return card
    message = value.get("message") if value and isinstance(value.get("message"), str) else None
    card.parts.append(Code(cut(message or text, PREVIEW_CHARS), cls="gth-copy-result"))
    return card


def _binary(text: str) -> list[Block]:
    head, _, data = text.partition(";base64,")
    fields = dict(p.split(":", 1) for p in head.split(";")[1:] if ":" in p)
    name = fields.get("path", "").rsplit("/", 1)[-1][:200]
    mime = fields.get("data", "")
    parts: list[Block] = [Line(f"{name} ({fields.get('type', 'file')}, {mime})")]
    url = inline_image_url(mime, data) if fields.get("type") == "image" and data else None
    if url:
        parts.append(Image(url, f"{name} (read by gth_read_binary)"))
    return parts
