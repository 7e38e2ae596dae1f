"""JSONC: JSON plus ``//`` and ``/* */`` comments and trailing commas, as Gaunt Sloth reads it.

Comments and trailing commas are blanked out (newlines kept, so every remaining character keeps its
line and column) and the result goes to the standard library's :mod:`json`. That parser is exact
about valid JSON, which the ``json5`` package is not: json5 0.17 decodes a ``\\ud83d\\ude00``
surrogate-pair escape into two lone surrogates instead of one character.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads"]


def loads(text: str) -> Any:
    """Parse JSONC ``text``; raises :class:`json.JSONDecodeError` (with line and column)."""
    return json.loads(strip(text))


def strip(text: str) -> str:
    """Return ``text`` with comments and trailing commas replaced by spaces."""
    out = list(text)
    i, n = 0, len(text)
    comma = -1  # index of a comma that is trailing if the next token closes a container
    previous = ""  # the last significant character before the current one
    while i < n:
        char = text[i]
        if char == '"':
            start = i
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            comma, previous = -1, text[start]
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise json.JSONDecodeError("Unterminated /* comment", text, i)
            end += 2
        else:
            if char in "}]" and comma >= 0:
                out[comma] = " "
            if not char.isspace():
                comma = i if char == "," and previous not in ("", ",", ":", "[", "{") else -1
                previous = char
            i += 1
            continue
        for j in range(i, end):
            if out[j] not in "\r\n":
                out[j] = " "
        i = end
    return "".join(out)
