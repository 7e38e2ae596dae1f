"""Text as the agent hands it on: ANSI escapes stripped, and long text capped keeping its head
and tail, saying how much was left out.

The escapes are ``spec/output.json``'s pattern, which the widget strips with too (CSI colour and
cursor codes; OSC sequences such as hyperlinks, each ended by its first BEL or ST, so a link's
text stays). A kernel's output, a saved copy's tool card, an A2A agent's reply and ``%gth
--explain``'s traceback all pass through these two, so each behaves one way wherever it runs.
"""

from __future__ import annotations

import re

from .spec import spec

__all__ = ["cap", "strip_ansi"]

_ANSI = re.compile(spec("output")["ansi"])
#: What stands where :func:`cap` left text out (``{}``: how many characters).
CUT = "… [{} characters cut] …"


def strip_ansi(text: str) -> str:
    """Removes ANSI colour and cursor escapes (IPython colours its tracebacks)."""
    return _ANSI.sub("", text)


def cap(text: str, limit: int, *, marker: str = CUT) -> str:
    """Keeps the head and tail of ``text`` within ``limit`` characters; ``marker`` (with ``{}``
    for the count) says on a line of its own how much was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n{marker.format(cut)}\n{text[-half:]}"
