"""Checking the values a model puts into a configured command (custom tools, ``run_single_test``).

Each value reaches the command as **exactly one argument**: it is quoted for the shell
(``shlex.quote``) where its ``${name}`` stands, or where it is appended, so spaces, globs, ``{}``,
``~`` and quotes in a value mean nothing to the shell. (A template whose placeholder sits inside
quotes would undo that; the configuration refuses it when it loads, see
``config/command_template.py``.) ``docker build -t ${image}:${tag} .`` still makes one word.

On top of that, Gaunt Sloth's four checks, with its messages, each skippable per parameter through
``allow`` (``shell-injection`` only makes the value literal now; it can no longer inject):

- ``absolute-paths``: stricter than Gaunt Sloth, it looks at the whole value: ``/`` or ``~`` at
  the start or after whitespace, ``=``, ``:`` or ``,`` (``--file=/etc/passwd``, ``x:/etc``,
  ``~/.bashrc``), and a leading ``\\``;
- ``directory-traversal``: ``..``, also after normalising;
- ``shell-injection``: ``| & ; ` ' $ $( \\n \\r``, and ``<`` ``>`` (a redirection writes a file
  without a command being injected; the message lists "redirection");
- ``null-bytes``.

And one of ours, ``option-injection``: a value starting with ``-`` (before or after normalising:
``./-rf`` normalises to ``-rf``) would be read as an option by most programs (``find``'s
``-exec``, ``pytest -p`` loading a plugin), so it is refused.

A value that passes is normalised like a path (``a//b/./c`` becomes ``a/b/c``) unless absolute
paths are allowed. The dev tools use the same checks without the single quote and without the
list of symbols in the message, as Gaunt Sloth's dev toolkit does.

Interpolation: if any given parameter has a ``${name}`` placeholder in the command, every given
parameter replaces its placeholders (all occurrences); otherwise the values are appended,
space-separated, in the order the parameters are defined.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["ParameterError", "build_command", "validate_value"]

_INJECTION = ("|", "&", ";", "`", "'", "$", "$(", "\n", "\r", "<", ">")
_DEV_INJECTION = ("|", "&", ";", "`", "$", "$(", "\n", "\r", "<", ">")
_SYMBOLS = (
    "Disallowed symbols pipe, ampersand, semicolon, backtick, single quote, dollar sign, "
    "command substitution, newline, carriage return, redirection"
)
# A path that starts anywhere a program may split the value: `a /etc`, `--f=/etc`, `a:/etc`.
_ABSOLUTE = re.compile(r"(?:^|[\s=:,])[/~]|^\\")


class ParameterError(ValueError):
    """A value failed a check; ``str(error)`` is Gaunt Sloth's message for it."""


def _normalize(value: str) -> str:
    return posixpath.normpath(value) if value else "."


def _traversal(name: str) -> ParameterError:
    return ParameterError(f"Directory traversal attempts are not allowed in parameter '{name}'")


def validate_value(
    value: str, name: str, allow: Iterable[str] = (), *, dev_tool: bool = False
) -> str:
    """``value`` checked and normalised (module docstring); raises :class:`ParameterError`."""
    allowed = set(allow)
    if "absolute-paths" not in allowed and _ABSOLUTE.search(value):
        raise ParameterError(f"Absolute paths are not allowed for parameter '{name}'")
    traversal = "directory-traversal" not in allowed
    if traversal and (".." in value or "\\..\\" in value or "/../" in value):
        raise _traversal(name)
    if "shell-injection" not in allowed:
        symbols = _DEV_INJECTION if dev_tool else _INJECTION
        if any(symbol in value for symbol in symbols):
            message = f"Shell injection attempts are not allowed in parameter '{name}'"
            raise ParameterError(message if dev_tool else f"{message}.{_SYMBOLS}")
    if "null-bytes" not in allowed and "\0" in value:
        raise ParameterError(f"Null bytes are not allowed in parameter '{name}'")
    result = value if "absolute-paths" in allowed else _normalize(value)
    if traversal and ".." in result:
        raise _traversal(name)
    if "option-injection" not in allowed and (value.startswith("-") or result.startswith("-")):
        raise ParameterError(f"Option injection attempts are not allowed in parameter '{name}'")
    return result


def build_command(
    template: str,
    values: Mapping[str, str],
    order: Sequence[str],
    allow: Mapping[str, Iterable[str]] | None = None,
    *,
    validate: bool = True,
    dev_tool: bool = False,
) -> str:
    """``template`` with ``values`` quoted and interpolated or appended; ``validate=False`` (for
    a command a person is asked to approve anyway) skips the checks, never the quoting."""
    allow = allow or {}

    def checked(name: str) -> str:
        value = values[name]
        if validate:
            value = validate_value(value, name, allow.get(name, ()), dev_tool=dev_tool)
        return shlex.quote(value)

    if any("${" + name + "}" in template for name in values):
        # One pass, so a value holding another placeholder's text is never substituted again.
        quoted = {name: checked(name) for name in values}
        slots = "|".join(re.escape("${" + name + "}") for name in values)
        return re.sub(slots, lambda m: quoted[m.group(0)[2:-1]], template)
    appended = [checked(name) for name in order if name in values]
    return f"{template} {' '.join(appended)}" if appended else template
