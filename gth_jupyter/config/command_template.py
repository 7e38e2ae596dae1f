"""Where a ``${param}`` placeholder may stand in a configured command template.

A model's value is quoted for the shell where its placeholder stands (``shlex.quote``), so that it
reaches the command as exactly one argument. That only holds where the placeholder is a bare
shell word, or part of one (``-t ${image}:${tag}``). Inside quotes (``grep '${p}' .``), the
quotes the value brings would *close* the template's own, and the value would be split or
expanded again; the same goes for a placeholder after a backslash, inside another ``${...}``
expansion, or in a here-document body. :func:`unsafe_placeholders` finds those, so the
configuration is refused when it loads rather than misbehaving when the model calls the tool.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["unsafe_placeholders"]


def unsafe_placeholders(template: str, names: Iterable[str]) -> list[str]:
    """The names among ``names`` whose ``${name}`` stands where a quoted value would not be one
    word (in the order first found, each once)."""
    slots = {"${" + name + "}": name for name in names}
    found: list[str] = []
    quote: str | None = None  # the open quote character, if any
    braces = 0  # depth of ordinary ${...} expansions we are inside
    heredoc = pending = False  # inside a here-document body / a `<<` waiting for its newline
    i = 0
    while i < len(template):
        slot = next((s for s in slots if template.startswith(s, i)), None)
        if slot is not None:
            if (quote or braces or heredoc) and slots[slot] not in found:
                found.append(slots[slot])
            i += len(slot)
            continue
        char = template[i]
        if quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            # An escaped placeholder would turn into an escaped opening quote.
            after = next((s for s in slots if template.startswith(s, i + 1)), None)
            if after is not None and slots[after] not in found:
                found.append(slots[after])
            i += 2 + (len(after) - 1 if after else 0)
            continue
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif template.startswith("${", i):
            braces += 1
            i += 2
            continue
        elif char == "}" and braces:
            braces -= 1
        elif template.startswith("<<<", i):  # a here-string is an ordinary word
            i += 3
            continue
        elif template.startswith("<<", i):
            pending = True
            i += 2
            continue
        elif char == "\n" and pending:
            heredoc = True  # from here on, to be safe, until the end of the template
        i += 1
    return found
