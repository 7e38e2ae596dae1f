"""Errors and warnings raised while loading a Gaunt Sloth style configuration.

A :class:`ConfigError` always says *where* the problem is: the file, and for a bad value the key
path inside it (``commands.api.port``, ``approvals.deny[0].pattern``), so a user can go straight to
the line to fix. Pydantic's :class:`~pydantic.ValidationError` is converted into one, reporting the
most specific error and how many further places are wrong.

Unknown keys and unknown built-in tool names do not stop loading: they are reported through
:func:`report`, as a :class:`GthConfigWarning` and on the ``gth_jupyter.config`` logger.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gth_jupyter.contract.errors import CodedError

__all__ = ["ConfigError", "GthConfigWarning", "format_key_path", "report"]

logger = logging.getLogger("gth_jupyter.config")

KeyPath = tuple[str | int, ...]


class GthConfigWarning(UserWarning):
    """Something in a configuration file is ignored (an unknown key or built-in tool name)."""


def report(message: str) -> None:
    """Emit ``message`` as a :class:`GthConfigWarning` and on the ``gth_jupyter.config`` logger."""
    warnings.warn(message, GthConfigWarning, stacklevel=2)
    logger.warning(message)


def format_key_path(parts: Iterable[str | int]) -> str:
    """Render a key path as users write it: ``commands.api.port``, ``approvals.deny[0].pattern``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


class ConfigError(CodedError):
    """A configuration file is missing, is not valid JSONC, or holds an invalid value.

    Attributes:
        code: a stable snake_case identifier a caller can match on: ``config_not_found``,
            ``config_unreadable``, ``config_invalid_json`` or ``config_invalid``.
        file: the configuration file at fault, when known.
        key_path: where inside the file, e.g. ``commands.api.port`` (``None`` for syntax errors).
        line, column: 1-based position of a syntax error.
        detail: the bare reason, without the location prefix.
    """

    def __init__(
        self,
        detail: str,
        *,
        code: str = "config_invalid",
        file: Path | None = None,
        key_path: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.code = code
        self.file = file
        self.key_path = key_path
        self.line = line
        self.column = column
        self.detail = detail
        super().__init__(self._compose(), detail, code=code)

    def _compose(self) -> str:
        if self.code == "config_not_found":
            return f"Configuration file not found: {self.file}"
        what = "Invalid JSON" if self.code == "config_invalid_json" else "Invalid configuration"
        if self.code == "config_unreadable":
            what = "Cannot read configuration"
        where = f" in {self.file}" if self.file is not None else ""
        if self.line is not None:
            where += f" at line {self.line}, column {self.column}"
        elif self.key_path:
            where += f" at {self.key_path}"
        return f"{what}{where}: {self.detail}"

    @classmethod
    def from_validation_error(
        cls,
        error: ValidationError,
        data: Any,
        file_of: Callable[[KeyPath], Path | None],
    ) -> ConfigError:
        """Convert a pydantic error raised while validating ``data``.

        The most specific error (the one reaching deepest into ``data``) is reported; errors for
        the other members of a union at the same place are joined, and other places with errors
        are counted. ``file_of`` names the file a key path came from (configs merge from layers).
        """
        by_path: dict[KeyPath, list[str]] = {}
        for item in error.errors():
            path = _data_path(item["loc"], data, missing=item["type"] == "missing")
            message = item["msg"].removeprefix("Value error, ")
            messages = by_path.setdefault(path, [])
            if message not in messages:
                messages.append(message)
        # A union reports one error per member; the members that failed at the container itself
        # (a prefix of another error's path) are noise beside the one that reached further in.
        places = [p for p in by_path if not any(q[: len(p)] == p and q != p for q in by_path)]
        path = max(places, key=len)  # the first of the deepest, as dicts keep insertion order
        detail = "; ".join(by_path[path])
        others = len(places) - 1
        if others:
            detail += f" (and {others} more error{'s' if others > 1 else ''})"
        return cls(detail, file=file_of(path), key_path=format_key_path(path) or None)


def _data_path(loc: Sequence[str | int], data: Any, *, missing: bool) -> KeyPath:
    """Keep the parts of a pydantic ``loc`` that are keys or indexes in ``data``.

    Pydantic inserts union member tags (``'list[str]'``, ``'function-after[...]'``) into ``loc``;
    walking the input drops them. A missing required key is kept as the last part.
    """
    path: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        elif missing and part == loc[-1] and isinstance(node, dict):
            pass  # a missing required key: report where it should have been
        else:
            continue
        path.append(part)
    return tuple(path)
