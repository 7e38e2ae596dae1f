"""Reading an SSE body in tests: each frame's ``data:`` as JSON, whatever other fields
(``id:``) the frame carries."""

from __future__ import annotations

import json
from typing import Any


def frames_of(text: str | bytes) -> list[dict[str, str]]:
    """Each frame's fields (``id``, ``data``...), comments and empty frames left out."""
    if isinstance(text, bytes):
        text = text.decode()
    out: list[dict[str, str]] = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            fields[name] = fields[name] + "\n" + value if name in fields else value
        if fields:
            out.append(fields)
    return out


def sse_events(text: str | bytes, *, lf_only: bool = False) -> list[dict[str, Any]]:
    """The AG-UI events of an SSE body, in order; ``lf_only``: its lines must end in LF alone
    (as the Jupyter extension writes them), not CRLF or CR."""
    if isinstance(text, bytes):
        text = text.decode()
    assert not lf_only or "\r" not in text, "a CR in the SSE body"
    return [json.loads(f["data"]) for f in frames_of(text) if "data" in f]
