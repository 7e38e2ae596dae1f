"""Specs Python and JavaScript both read: one JSON file for each behaviour that exists in both
languages, so a constant has one home.

The files sit beside this face and ship in the wheel. Python reads them through :func:`spec`;
the widget's bundle (``js/src``) and the notebook extension (``labextension/src``) import the same
files (``import media from ".../contract/spec/media.json" with { type: "json" }``), and esbuild
and the extension's build put them into the bundles. Each file's ``about`` says what reads it.

- ``output``: how a kernel's output reaches the model (ANSI escapes stripped, a run's caps and
  the image types it keeps): ``kernel/execute.py`` and ``js/src/tools/notebook_summary.js``;
- ``media``: the image types shown inline: the static copy, the widget and the extension;
- ``browser_tools``: the widget's built-in browser tools and the notebook tools' names;
- ``approvals``: an approval's interrupt reason and the answer it takes.

Where the code itself must exist twice (a card drawn in the DOM and in a saved copy), a parity
test runs both over the same hostile inputs instead (``tests/js/``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

__all__ = ["spec"]


@cache
def spec(name: str) -> Any:
    """The parsed ``<name>.json`` of this folder (read once; treat it as read-only)."""
    return json.loads((files(__name__) / f"{name}.json").read_text(encoding="utf-8"))
