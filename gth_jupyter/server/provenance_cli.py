"""``gth-jupyter provenance NOTEBOOK.ipynb [--json] [--strip]``: which cells of a saved notebook
the agent wrote (see :mod:`gth_jupyter.copy.provenance`), or the file without those marks."""

from __future__ import annotations

import json
import sys

from ..copy.provenance import report, strip_provenance, written_cells

__all__ = ["provenance"]


def provenance(path: str, *, as_json: bool, strip: bool) -> int:
    """``gth-jupyter provenance``: the file's written cells, or the file without their marks."""
    try:
        with open(path, encoding="utf-8") as file:
            notebook = json.load(file)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"gth-jupyter provenance: cannot read {path} as a notebook: {exc}", file=sys.stderr)
        return 2
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        print(f"gth-jupyter provenance: {path} is not a notebook (no cells).", file=sys.stderr)
        return 2
    if strip:
        dropped = strip_provenance(notebook)
        if dropped:
            # As Jupyter writes a notebook: one-space indent, non-ASCII as is, a last newline.
            text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
        if as_json:
            print(json.dumps({"path": path, "stripped": dropped}))
        else:
            print(f"{path}: removed the agent's provenance from {dropped} cell(s).")
        return 0
    cells = written_cells(notebook)
    if as_json:
        print(json.dumps({"path": path, "cells": [c.to_json() for c in cells]}, indent=1))
    else:
        print(report(path, cells))
    return 0
