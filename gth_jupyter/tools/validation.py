"""Checking the values a model puts into a configured command (custom tools, ``run_single_test``).

Gaunt Sloth's four checks, with its messages, each skippable per parameter through ``allow``:
``absolute-paths``, ``directory-traversal`` (``..``, also after normalising), ``shell-injection``
(``| & ; ` ' $ $( \\n \\r``) and ``null-bytes``. One addition: ``<`` and ``>`` count as shell
injection too (the message lists "redirection"), since a redirection writes a file without any
command being injected. A value that passes is normalised like a path (``a//b/./c`` becomes
``a/b/c``) unless absolute paths are allowed. The dev tools use the same checks without the
single quote and without the list of symbols in the message, as Gaunt Sloth's dev toolkit does.

Interpolation: if any given parameter has a ``${name}`` placeholder in the command, every given
parameter replaces its placeholders (all occurrences); otherwise the values are appended,
space-separated, in the order the parameters are defined.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["ParameterError", "build_command", "validate_value"]

_INJECTION = ("|", "&", ";", "`", "'", "$", "$(", "\n", "\r", "<", ">")
_DEV_INJECTION = ("|", "&", ";", "`", "$", "$(", "\n", "\r", "<", ">")
_SYMBOLS = (
    "Disallowed symbols pipe, ampersand, semicolon, backtick, single quote, dollar sign, "
    "command substitution, newline, carriage return, redirection"
)


class ParameterError(ValueError):
    """A value failed a check; ``str(error)`` is Gaunt Sloth's message for it."""


def _normalize(value: str) -> str:
    return posixpath.normpath(value) if value else "."


def validate_value(
    value: str, name: str, allow: Iterable[str] = (), *, dev_tool: bool = False
) -> str:
    """``value`` checked and normalised (module docstring); raises :class:`ParameterError`."""
    allowed = set(allow)
    if "absolute-paths" not in allowed and (value.startswith("/") or value.startswith("\\")):
        raise ParameterError(f"Absolute paths are not allowed for parameter '{name}'")
    traversal = "directory-traversal" not in allowed
    if traversal and (".." in value or "\\..\\" in value or "/../" in value):
        raise ParameterError(f"Directory traversal attempts are not allowed in parameter '{name}'")
    if "shell-injection" not in allowed:
        symbols = _DEV_INJECTION if dev_tool else _INJECTION
        if any(symbol in value for symbol in symbols):
            message = f"Shell injection attempts are not allowed in parameter '{name}'"
            raise ParameterError(message if dev_tool else f"{message}.{_SYMBOLS}")
    if "null-bytes" not in allowed and "\0" in value:
        raise ParameterError(f"Null bytes are not allowed in parameter '{name}'")
    if "absolute-paths" in allowed:
        if traversal and ".." in _normalize(value):
            raise ParameterError(
                f"Directory traversal attempts are not allowed in parameter '{name}'"
            )
        return value
    normalized = _normalize(value)
    if traversal and ".." in normalized:
        raise ParameterError(f"Directory traversal attempts are not allowed in parameter '{name}'")
    return normalized


def build_command(
    template: str,
    values: Mapping[str, str],
    order: Sequence[str],
    allow: Mapping[str, Iterable[str]] | None = None,
    *,
    validate: bool = True,
) -> str:
    """``template`` with ``values`` interpolated or appended; ``validate=False`` (for showing a
    command to a person who is asked to approve it anyway) skips the checks."""
    allow = allow or {}

    def checked(name: str) -> str:
        value = values[name]
        return validate_value(value, name, allow.get(name, ())) if validate else value

    if any("${" + name + "}" in template for name in values):
        command = template
        for name in values:
            command = command.replace("${" + name + "}", checked(name))
        return command
    appended = [checked(name) for name in order if name in values]
    return f"{template} {' '.join(appended)}" if appended else template
