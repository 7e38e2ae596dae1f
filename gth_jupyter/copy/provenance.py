"""Which cells of a saved notebook the agent wrote: read from each cell's ``metadata.gth``.

The notebook bridge (``labextension/src/bridge.js``) keeps, in every cell the agent inserted or
edited, ``{turnId, change, threadId, toolCallId, tool, model, at, approvedBy?, sourceHash}``.
``sourceHash`` is the SHA-256 of the source the agent wrote, so whether a person changed the
cell since is computed here, from the file alone, whatever edited it. Pure: no kernel, no
server; ``gth-jupyter provenance`` prints it (``--json`` for tools) or strips it.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "PROVENANCE_KEY",
    "WrittenCell",
    "report",
    "source_hash",
    "strip_provenance",
    "written_cells",
]

#: The cell metadata key the bridge writes (nbformat keeps unknown keys as they are).
PROVENANCE_KEY = "gth"
_FIELDS = ("turnId", "threadId", "toolCallId", "tool", "model", "at", "approvedBy")


def source_hash(source: str) -> str:
    """As bridge.js computes it: ``sha256:`` and the hex digest of the UTF-8 source."""
    return "sha256:" + hashlib.sha256(source.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class WrittenCell:
    """One cell the agent wrote or edited. ``editedSince``: the source is no longer what the
    agent wrote (``None`` for a cell from before provenance, which kept no hash). Fields are
    named as the metadata and ``--json`` name them."""

    index: int
    cellId: str | None
    cellType: str
    change: str
    turnId: str | None = None
    threadId: str | None = None
    toolCallId: str | None = None
    tool: str | None = None
    model: str | None = None
    at: str | None = None
    approvedBy: str | None = None
    editedSince: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def written_cells(notebook: dict[str, Any]) -> list[WrittenCell]:
    """The cells whose metadata says the agent wrote them, in notebook order."""
    found: list[WrittenCell] = []
    cells = notebook.get("cells")
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict):
            continue
        metadata = cell.get("metadata")
        gth = metadata.get(PROVENANCE_KEY) if isinstance(metadata, dict) else None
        if not isinstance(gth, dict):
            continue
        change = gth.get("change", "inserted")  # cells from before provenance: {turnId}
        fields = {k: gth[k] for k in _FIELDS if isinstance(gth.get(k), str)}
        kept = gth.get("sourceHash")
        since = source_hash(_source(cell)) != kept if isinstance(kept, str) else None
        found.append(
            WrittenCell(
                index=index,
                cellId=cell.get("id") if isinstance(cell.get("id"), str) else None,
                cellType=str(cell.get("cell_type", "")),
                change=change if change in ("inserted", "edited") else "inserted",
                editedSince=since,
                **fields,
            )
        )
    return found


def strip_provenance(notebook: dict[str, Any]) -> int:
    """Drops every cell's ``metadata.gth`` in place; how many cells had one."""
    dropped = 0
    cells = notebook.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        if isinstance(metadata, dict) and PROVENANCE_KEY in metadata:
            del metadata[PROVENANCE_KEY]
            dropped += 1
    return dropped


def _line(cell: WrittenCell) -> str:
    parts = [f"cell {cell.index} ({cell.cellType})", cell.change]
    if cell.turnId:
        parts.append(f"turn {cell.turnId}")
    if cell.tool:
        parts.append(f"by {cell.tool}")
    if cell.model:
        parts.append(f"model {cell.model}")
    if cell.approvedBy:
        parts.append(f"approved by {cell.approvedBy}")
    if cell.at:
        parts.append(cell.at)
    if cell.editedSince:
        parts.append("edited by a person since")
    elif cell.editedSince is None:
        parts.append("no source hash: edits since cannot be told")
    return " · ".join(parts)


def report(path: str, cells: list[WrittenCell]) -> str:
    """What ``gth-jupyter provenance`` prints: one line per cell the agent wrote."""
    if not cells:
        return f"{path}: no cell says the agent wrote it."
    since = sum(1 for c in cells if c.editedSince)
    head = f"{path}: the agent wrote {len(cells)} cell{'s' if len(cells) != 1 else ''}"
    head += f", {since} edited by a person since." if since else "."
    return "\n".join([head, *(f"  {_line(c)}" for c in cells)])
