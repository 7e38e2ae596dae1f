"""The child process in which ``gth_grep``'s fallback matches lines, so that it can be stopped.

Python's ``re`` backtracks: ``(a+)+$`` against thirty ``a`` and a ``b`` runs for hours, and a
thread running it cannot be stopped. So the tool (``_fallback``) walks the tree itself and
hands the file list to this process, which reads the job as JSON on stdin and answers with one
JSON array per line on stdout:

- ``["file", rel]`` as it opens a file (so a stop can name the file);
- ``["match", rel, line, text]`` for each matching line;
- ``["beat"]`` at least every :data:`BEAT_S` seconds while it reads, between two lines;
- ``["end"]`` when it is done.

A match stuck on one line sends nothing, so the tool stops the process when the output falls
silent. Only the standard library and ``_scan`` are imported (see ``_fallback`` for how
the process starts without loading the tools).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from gth_jupyter.tools.grep._scan import search

__all__ = ["BEAT_S", "main"]

#: The longest the worker stays silent while it is making progress.
BEAT_S = 0.25


def main() -> None:
    job: dict[str, Any] = json.load(sys.stdin)
    regex = re.compile(job["pattern"])
    last = time.monotonic()

    def send(*message: object) -> None:
        nonlocal last
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()
        last = time.monotonic()

    def tick() -> None:
        if time.monotonic() - last >= BEAT_S:
            send("beat")

    found = search(
        Path(job["root"]),
        job["files"],
        regex,
        job["limit"],
        starting=lambda rel: send("file", rel),
        tick=tick,
    )
    for match in found:
        send("match", match.path, match.line, match.text)
    send("end")
