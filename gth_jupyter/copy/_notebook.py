"""The notebook tools' cards in a static copy, as the widget draws them
(``js/src/view/notebookcards.js``): ``read_notebook`` as the cells it read, one line each;
``insert_cell`` and ``edit_cell`` with their source as code; where a cell went (and, when it
ran, its outputs, drawn as ``run_python``'s by the caller); an edit's change as a line diff.
Everything here came from the notebook or the agent: it goes in as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._blocks import Block, Code, Line, Note, Table, as_list, cut

__all__ = ["notebook_args", "notebook_result"]

LIST_CELLS = 60
FIRST_LINE = 100
SOURCE_CHARS = 20000


def _first_line(source: Any) -> str:
    # nbformat's list of lines joined, as the widget's notebook_summary.joinText does.
    text = "".join(map(str, source)) if isinstance(source, list) else str(source or "")
    line = next((s for s in text.split("\n") if s.strip()), "")
    return line if len(line) <= FIRST_LINE else line[:FIRST_LINE] + "…"


def _index(cell: Mapping[str, Any]) -> str:
    return "?" if cell.get("index") is None else str(cell["index"])


def notebook_args(name: str, args: Mapping[str, Any]) -> list[Block]:
    """``insert_cell``'s and ``edit_cell``'s source as code, with where it goes."""
    if name not in ("insert_cell", "edit_cell") or not isinstance(args.get("source"), str):
        return []
    markdown = args.get("cell_type") == "markdown"
    if name == "edit_cell":
        where = f"cell {args.get('cell_id', '?')}"
    else:
        bits = ["markdown" if markdown else "code"]
        bits.append(f"after {args['after']}" if args.get("after") else "below the asking cell")
        bits += ["run"] if args.get("run") else []
        where = ", ".join(str(b) for b in bits)
    parts: list[Block] = [Line(where, cls="gth-copy-justification")]
    if isinstance(args.get("justification"), str) and args["justification"]:
        parts.append(Line(args["justification"], cls="gth-copy-justification"))
    parts.append(Code(cut(args["source"], SOURCE_CHARS), "markdown" if markdown else "python"))
    return parts


def notebook_result(name: str, v: Mapping[str, Any]) -> list[Block] | None:
    """A notebook tool's result drawn, or None when it has another shape."""
    if name == "read_notebook" and isinstance(v.get("cells"), list):
        cells = [c for c in v["cells"] if isinstance(c, dict)]
        span = f" (cells {_index(cells[0])}\N{EN DASH}{_index(cells[-1])})" if cells else ""
        total = v.get("cell_count") if isinstance(v.get("cell_count"), int) else len(cells)
        path = f" of {v['path']}" if isinstance(v.get("path"), str) and v["path"] else ""
        rows = []
        for c in cells[:LIST_CELLS]:
            failed = [
                o
                for o in as_list(c.get("outputs"))
                if isinstance(o, dict) and o.get("type") == "error"
            ]
            mark = ", ".join(
                m
                for m in (
                    "asking" if c.get("asking") else "",
                    *(str(o.get("ename", "")) for o in failed[:1]),
                )
                if m
            )
            rows.append(
                [
                    _index(c),
                    str(c.get("type", "")),
                    _first_line(c.get("source")),
                    mark,
                ]
            )
        parts: list[Block] = [Line(f"Read {len(cells)} of {total} cells{span}{path}.")]
        if rows:
            parts.append(Table(["#", "Type", "First line", ""], rows))
        if len(cells) > LIST_CELLS:
            parts.append(Note(f"{len(cells) - LIST_CELLS} more cells read, not listed here."))
        return parts
    if name == "insert_cell" and isinstance(v.get("cell_id"), str):
        ran = isinstance(v.get("status"), str)
        count = (
            f", ran as [{v['execution_count']}]"
            if ran and isinstance(v.get("execution_count"), int)
            else ""
        )
        return [Line(f"Inserted cell {v.get('index', '?')} (id {v['cell_id']}){count}.")]
    if (
        name == "edit_cell"
        and isinstance(v.get("cell_id"), str)
        and isinstance(v.get("diff"), list)
    ):
        lines = [str(line) for line in v["diff"]]
        if not lines:
            return [Line(f"Cell {v['cell_id']} unchanged.")]
        added, removed = (0 if v.get(k) is None else v[k] for k in ("added", "removed"))
        head = f"Edited cell {v['cell_id']}: +{added} \N{MINUS SIGN}{removed} lines."
        return [Line(head), Code(cut("\n".join(lines), SOURCE_CHARS), "diff")]
    return None
