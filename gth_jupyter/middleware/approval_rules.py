"""Matching one call against the ``approvals`` ``allow`` / ``deny`` / ``escalate`` entries.

As Gaunt Sloth does it (``core/approvals/matcher``):

- A ``shell`` entry compares with the *normalised* command (whitespace runs collapsed); a ``tool``
  entry with the tool name; an ``mcpTool`` entry with the tool's own name on the named ``server``
  (``"*"``: any), the tool being registered as ``mcp__<server>__<name>``.
- ``glob``: ``*`` matches any run of characters (``/`` and spaces included), the rest is literal,
  the whole string must match: ``npm publish*`` covers ``npm publish --tag x``, ``npm publish *``
  does not cover a bare ``npm publish``. ``regexp``: Python syntax, searched as written. ``hint``:
  every named annotation must hold; a tool that declares none reads as the MCP fail-closed
  defaults (not read-only, destructive, not idempotent, open world).
- The asymmetry: an ``allow`` entry never matches a command that is not one plain command (one
  that composes with ``; & | && ||`` or a line break, substitutes with ``$(`` or backticks,
  redirects with ``<``/``>``, or expands ``$``). ``deny`` and ``escalate`` compare against the
  whole command *and* each piece a shell would run, with case folded for exact and glob.
- Resolution: deny beats escalate beats allow, whatever the order entries were written in.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

from gth_jupyter.config.schema import ApprovalEntry, ApprovalsConfig

__all__ = [
    "FAIL_CLOSED_HINTS",
    "RuleHit",
    "Subject",
    "describe_entry",
    "is_plain_command",
    "match_rules",
    "names_subject",
    "normalize_command",
]

ListName = Literal["deny", "escalate", "allow"]

FAIL_CLOSED_HINTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
_SEPARATORS = re.compile(r"&&|\|\||[;&|\n]|\$\(|`|\)")
_OPERATOR_CHARS = set(";&|<>()")


@dataclass(frozen=True)
class Subject:
    """What a call looks like to the rules: a shell command, or a tool (maybe on an MCP server)."""

    kind: Literal["shell", "tool", "mcpTool"]
    name: str
    command: str | None = None
    server: str | None = None
    host: str | None = None
    hints: dict[str, bool] | None = None


@dataclass(frozen=True)
class RuleHit:
    list: ListName
    entry: ApprovalEntry


def names_subject(name: str, host: str | None, hints: dict[str, bool] | None) -> Subject:
    """The subject of a non-shell call: ``mcp__<server>__<tool>`` is an MCP tool on ``server``."""
    if name.startswith("mcp__") and name.count("__") >= 2:
        _, server, inner = name.split("__", 2)
        return Subject("mcpTool", inner, server=server, host=host, hints=hints)
    return Subject("tool", name, host=host, hints=hints)


def normalize_command(command: str) -> str:
    return " ".join(command.split())


def is_plain_command(command: str) -> bool:
    """True when ``command`` is one command a pattern can be trusted to describe."""
    if any(ch in command for ch in "\n\r`$"):
        return False
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: not something to approve by pattern
        return False
    return bool(tokens) and not any(set(t) <= _OPERATOR_CHARS for t in tokens)


def _segments(command: str) -> list[str]:
    parts = [normalize_command(p) for p in _SEPARATORS.split(command)]
    return [p for p in parts if p]


def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), re.S)


def _compare(entry: ApprovalEntry, candidate: str, fold: bool) -> bool:
    pattern = entry.pattern
    assert isinstance(pattern, str)
    if entry.matcher == "regexp":
        return re.search(pattern, candidate) is not None
    if fold:
        candidate, pattern = candidate.lower(), pattern.lower()
    if entry.matcher == "exact":
        return candidate == pattern
    return _glob(pattern).fullmatch(candidate) is not None


def _matches(entry: ApprovalEntry, subject: Subject, restrictive: bool) -> bool:
    if entry.type == "shell" or subject.kind == "shell":
        if entry.type != "shell" or subject.kind != "shell" or subject.command is None:
            return False
        if not restrictive:
            if not is_plain_command(subject.command):
                return False
            return _compare(entry, normalize_command(subject.command), fold=False)
        candidates = [normalize_command(subject.command), *_segments(subject.command)]
        return any(_compare(entry, c, fold=entry.matcher != "regexp") for c in candidates)
    if entry.type != subject.kind:
        return False
    if entry.type == "mcpTool" and entry.server not in ("*", subject.server):
        return False
    if entry.host is not None and entry.host != subject.host:
        return False
    if entry.matcher == "hint":
        assert isinstance(entry.pattern, dict)
        hints = subject.hints or FAIL_CLOSED_HINTS
        return all(hints.get(name) == want for name, want in entry.pattern.items())
    return _compare(entry, subject.name, fold=False)


def match_rules(
    approvals: ApprovalsConfig, subject: Subject, lists: tuple[ListName, ...]
) -> RuleHit | None:
    """The most restrictive entry among ``lists`` that matches ``subject``, if any."""
    for name in ("deny", "escalate", "allow"):
        if name not in lists:
            continue
        entries = getattr(approvals, name) or []
        for entry in entries:
            if _matches(entry, subject, restrictive=name != "allow"):
                return RuleHit(name, entry)
    return None


def describe_entry(entry: ApprovalEntry) -> str:
    """An entry as the user wrote it, for messages."""
    fields = [f'"type": "{entry.type}"']
    if entry.server:
        fields.append(f'"server": "{entry.server}"')
    fields.append(f'"matcher": "{entry.matcher}"')
    pattern = entry.pattern
    shown = f'"{pattern}"' if isinstance(pattern, str) else str(pattern).replace("'", '"')
    fields.append(f'"pattern": {shown}')
    return "{" + ", ".join(fields) + "}"
