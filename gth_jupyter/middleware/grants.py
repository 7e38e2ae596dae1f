"""Standing approvals a person granted from an approval card ("Always allow this…").

An approved answer may carry ``"grant": "thread" | "session"``: the gate then records a
:class:`Grant` for what ran, and a later call with the same key runs without asking, in that
thread (``thread``) or in any thread this server process serves (``session``). The key is
narrow on purpose: the exact command string for a shell call (not even whitespace is folded: to
``sh`` a newline separates commands, so ``echo x\nrm y`` is not ``echo x rm y``), the exact code
for ``run_python`` (and for ``insert_cell`` with ``run``, kept apart from it), the tool (on its
MCP server) for anything else. A shell command holding a line break or another control or
invisible character can be approved once but never granted
(:func:`grant_refusal` says why; the card shows it): what the person reads on the card need not
be what the shell runs. Grants live in memory only,
bounded, and are never written into the configuration; ``deny`` rules and a custom tool's failing
validation still win over them (the gate checks those first).
"""

from __future__ import annotations

import threading
import time
import unicodedata
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

from gth_jupyter.middleware.approval_rules import Subject

__all__ = [
    "MAX_GRANTS",
    "Grant",
    "GrantKey",
    "GrantScope",
    "GrantStore",
    "grant_key",
    "grant_refusal",
]

GrantScope = Literal["thread", "session"]
GrantKey = tuple[str, ...]
GRANT_SCOPES: tuple[GrantScope, ...] = ("thread", "session")
#: The most grants one store keeps; the oldest go first.
MAX_GRANTS = 500
_LABEL_CHARS = 200


def grant_key(subject: Subject, kind: str) -> GrantKey:
    """What a grant for this call covers: ``("shell", command)``, ``("code", code)`` (for
    ``run_python``; ``("code", code, tool)`` for code another tool runs, such as
    ``insert_cell`` with ``run``), ``("mcpTool", server, tool)`` or ``("tool", name)``."""
    if subject.kind == "shell":  # exact: any other string is another command
        return ("shell", subject.command or "")
    if kind == "code":
        # Keyed by the tool too: an "always allow" for code run_python runs must not let
        # insert_cell write that code into the notebook unasked, nor the other way round.
        if subject.name == "run_python":
            return ("code", subject.command or "")
        return ("code", subject.command or "", subject.name)
    if subject.kind == "mcpTool":
        return ("mcpTool", subject.server or "", subject.name)
    return ("tool", subject.name)


#: Character classes a grantable shell command may not hold: controls (newline, CR, tab, NUL, ESC,
#: NEL…), format characters (bidi overrides, zero-width ones) and line/paragraph separators.
_UNGRANTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def grant_refusal(subject: Subject, kind: str) -> str | None:
    """Why this call can be approved only once, never granted for later; ``None`` when it can.

    Only shell commands are refused: ``sh`` reads a newline or carriage return as the end of a
    command, and control or invisible characters make the command on the card differ from what
    runs, so an "always allow" for one would cover more than the person read. Code is granted
    as its exact text, newlines and all."""
    if subject.kind != "shell":
        return None
    for ch in subject.command or "":
        if unicodedata.category(ch) not in _UNGRANTABLE_CATEGORIES:
            continue
        if ch in "\n\r":
            what = "a line break, which the shell reads as the start of another command"
        else:
            name = unicodedata.name(ch, "")  # controls have none
            shown = f"U+{ord(ch):04X}" + (f" {name}" if name else "")
            what = f"{shown}, a control or invisible character"
        return (
            f"this command contains {what}, so it can be approved only this once, "
            "never always allowed"
        )
    return None


def _label(key: GrantKey, tool_name: str) -> str:
    if key[0] == "shell":
        text = key[1]
    elif key[0] == "code":
        lines = [line for line in key[1].splitlines() if line.strip()]
        first = lines[0].strip() if lines else ""
        more = " …" if len(lines) > 1 else ""
        text = f"{tool_name}: {first}{more}"
    elif key[0] == "mcpTool":
        text = f"{key[2]} (MCP server {key[1]})"
    else:
        text = key[1]
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"


@dataclass(frozen=True)
class Grant:
    """One standing approval."""

    id: str
    scope: GrantScope
    thread_id: str | None
    key: GrantKey
    label: str
    created_at: float
    #: Who granted it: a session grant covers that user's threads only (on a shared server,
    #: one user's "always allow" never runs a command in another's thread).
    owner: str = ""

    @property
    def kind(self) -> str:
        return self.key[0]

    def to_json(self) -> dict[str, Any]:
        """What ``GET gth/threads/{id}/grants`` lists."""
        return {
            "id": self.id,
            "scope": self.scope,
            "kind": self.kind,
            "label": self.label,
            "createdAt": int(self.created_at * 1000),
        }


class GrantStore:
    """The grants of one server process, shared by its approvals gate and its routes."""

    def __init__(self, limit: int = MAX_GRANTS) -> None:
        self.limit = limit
        self._grants: OrderedDict[str, Grant] = OrderedDict()
        self._lock = threading.Lock()

    def add(
        self,
        scope: GrantScope,
        thread_id: str | None,
        key: GrantKey,
        tool_name: str = "",
        owner: str = "",
    ) -> Grant:
        """Records ``owner``'s grant (the same one again returns the one already kept)."""
        thread = thread_id if scope == "thread" else None
        with self._lock:
            for grant in self._grants.values():
                if (
                    grant.scope == scope
                    and grant.thread_id == thread
                    and grant.key == key
                    and grant.owner == owner
                ):
                    return grant
            grant = Grant(
                uuid.uuid4().hex, scope, thread, key, _label(key, tool_name), time.time(), owner
            )
            self._grants[grant.id] = grant
            while len(self._grants) > self.limit:
                self._grants.popitem(last=False)
            return grant

    def match(self, thread_id: str | None, key: GrantKey, owner: str = "") -> Grant | None:
        """The grant that lets ``owner``'s call with ``key`` in ``thread_id`` run, if any."""
        with self._lock:
            for grant in self._grants.values():
                if grant.key == key and self._covers(grant, thread_id, owner):
                    return grant
        return None

    @staticmethod
    def _covers(grant: Grant, thread_id: str | None, owner: str) -> bool:
        if grant.scope == "session":  # one granted where no user is known covers the server
            return not grant.owner or grant.owner == owner
        return grant.thread_id == thread_id

    def for_thread(self, thread_id: str, owner: str = "") -> list[Grant]:
        """The thread's own grants and ``owner``'s session grants, oldest first."""
        with self._lock:
            return [g for g in self._grants.values() if self._covers(g, thread_id, owner)]

    def revoke(self, grant_id: str, owner: str | None = None) -> bool:
        """Forgets a grant (only ``owner``'s, when given); ``False`` when there is none by that
        id."""
        with self._lock:
            grant = self._grants.get(grant_id)
            if grant is None or (owner is not None and grant.owner and grant.owner != owner):
                return False
            del self._grants[grant_id]
            return True

    def __len__(self) -> int:
        return len(self._grants)
