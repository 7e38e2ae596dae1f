"""Runs a piece of the widget's JavaScript in Node on JSON and reads back its JSON answer.

The parity tests hold the Python and the JavaScript half of one behaviour to the same inputs:
the script reads ``input`` (the payload, sent on stdin, so it may be large) and answers with
``output(value)``. Modules are imported relative to ``js/`` (``await import("./src/...")``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

JS = Path(__file__).resolve().parent.parent / "js"
#: The image types the parity tests try: the four shown inline, then types no side may show
#: (SVG is a document; the rest are the types the widget once took beside those four).
IMAGE_TYPES = (
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/svg+xml",
    "image/bmp",
    "image/avif",
    "image/x-icon",
)
_PRELUDE = """
const input = JSON.parse(await new Promise((done) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => done(text || "null"));
}));
const output = (value) => process.stdout.write(JSON.stringify(value));
"""


def run_js(script: str, payload: Any = None) -> Any:
    """What ``script`` hands to ``output`` for ``payload`` (skips where there is no Node)."""
    if shutil.which("node") is None or not (JS / "node_modules").is_dir():
        pytest.skip("node or js/node_modules is missing: run scripts/setup.sh")
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", _PRELUDE + script],
        cwd=JS,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    return json.loads(ran.stdout)
