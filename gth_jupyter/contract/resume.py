"""The resume codec: the one place that turns an answer into the value a suspended graph resumes
with, and reads it back inside the graph.

- Whatever shape a client answers in (AG-UI ``resume[]`` entries, Gaunt Sloth's
  ``forwardedProps.command``, trailing tool messages) becomes a :class:`Resume`, keyed by
  interrupt id, through :func:`resume_from_entries`, :func:`resume_from_command` and
  :func:`resume_from_tool_results`.
- The answer to a client tool is a :class:`ClientToolAnswer`, and to an approval an
  :class:`ApprovalAnswer`; each has ``to_resume_value`` and ``from_resume_value``, and the latter
  reads every shape a caller may have resumed with.

LangGraph-free, like the rest of the run contract; what a thread waits on is in ``pending.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Literal, cast

from .errors import InterruptMismatchError, NoPendingInterruptError
from .pending import CLIENT_TOOL_INTERRUPT, PendingInterrupt
from .spec import spec

__all__ = [
    "APPROVAL_RESPONSE_SCHEMA",
    "ApprovalAnswer",
    "ClientToolAnswer",
    "Resume",
    "ToolResult",
    "encode_answer",
    "forwarded_command",
    "resume_from_command",
    "resume_from_entries",
    "resume_from_tool_results",
]

#: What an approval's answer may hold: the widget's shape (``contract/spec/approvals.json``).
APPROVAL_RESPONSE_SCHEMA: dict[str, Any] = deepcopy(spec("approvals")["response"])
_GRANTS = tuple(APPROVAL_RESPONSE_SCHEMA["properties"]["grant"]["enum"])


@dataclass(frozen=True)
class Resume:
    """Answers for a suspended thread: resume values by interrupt id, and the tool calls they
    answer (so middleware knows a call's answer is waiting without reading graph internals)."""

    values: dict[str, Any]
    tool_call_ids: frozenset[str] = frozenset()


# -- the resume codec: answers ----------------------------------------------------------------


@dataclass(frozen=True)
class ClientToolAnswer:
    """The client's answer to one suspended client tool call."""

    status: Literal["resolved", "cancelled"] = "resolved"
    payload: Any = None
    is_error: bool = False
    message_id: str | None = None

    def to_resume_value(self) -> dict[str, Any]:
        return {
            "kind": CLIENT_TOOL_INTERRUPT,
            "status": self.status,
            "payload": self.payload,
            "isError": self.is_error,
            "messageId": self.message_id,
        }

    @classmethod
    def from_resume_value(cls, value: Any) -> ClientToolAnswer:
        """Our own shape; anything else is Gaunt Sloth's, where the raw value is the result."""
        if isinstance(value, Mapping) and value.get("kind") == CLIENT_TOOL_INTERRUPT:
            message_id = value.get("messageId")
            return cls(
                "cancelled" if value.get("status") == "cancelled" else "resolved",
                value.get("payload"),
                bool(value.get("isError")),
                message_id if isinstance(message_id, str) and message_id else None,
            )
        return cls(payload=value)

    def content(self) -> str:
        """The payload as ToolMessage content: a string as is, anything else as JSON."""
        if isinstance(self.payload, str):
            return self.payload
        return json.dumps(self.payload, ensure_ascii=False, default=str)


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


@dataclass(frozen=True)
class ApprovalAnswer:
    """A person's decision on a tool call the approvals gate held back.

    Read from the widget's ``{"approved": bool, "editedArgs"?, "message"?, "grant"?}``
    (``grant``: ``"thread"`` or ``"session"`` also allows such calls from now on, see
    :mod:`gth_jupyter.middleware.grants`; absent, the answer is for this call only),
    LangChain's HITL decisions (``{"type": "approve" | "edit" | "reject"}``), ``True``, or a
    cancelled interrupt (``{"status": "cancelled"}``). Anything else is a rejection: an answer
    nobody can read never runs a tool (``editedArgs`` that is not an object, too)."""

    approved: bool
    edited_args: dict[str, Any] | None = None
    message: str | None = None
    grant: Literal["thread", "session"] | None = None

    def to_resume_value(self) -> dict[str, Any]:
        value: dict[str, Any] = {"approved": self.approved}
        if self.edited_args is not None:
            value["editedArgs"] = self.edited_args
        if self.message is not None:
            value["message"] = self.message
        if self.grant is not None:
            value["grant"] = self.grant
        return value

    @classmethod
    def from_resume_value(cls, value: Any) -> ApprovalAnswer:
        if value is True:
            return cls(True)
        if not isinstance(value, Mapping) or value.get("status") == "cancelled":
            return cls(False)
        if "approved" in value:
            approved = value["approved"] is True
            edited = value.get("editedArgs")
            if edited is not None and not isinstance(edited, dict):
                return cls(False)  # the widget edits to an object or not at all: unreadable
            grant = value.get("grant")
            return cls(
                approved,
                edited if isinstance(edited, dict) and approved else None,
                _text(value.get("message") or value.get("reason")),
                cast(Literal["thread", "session"], grant)
                if approved and grant in _GRANTS
                else None,
            )
        kind = value.get("type")
        if kind == "approve":
            return cls(True)
        if kind == "edit":
            action = value.get("edited_action") or value.get("editedAction") or {}
            args = action.get("args") if isinstance(action, Mapping) else None
            return cls(True, dict(args)) if isinstance(args, dict) else cls(False)
        return cls(False, None, _text(value.get("message")) if kind == "reject" else None)


def encode_answer(
    pending: PendingInterrupt,
    payload: Any,
    *,
    cancelled: bool = False,
    is_error: bool = False,
    message_id: str | None = None,
) -> Any:
    """The resume value answering ``pending`` with ``payload``, by the interrupt's kind."""
    if pending.kind == "client_tool":
        status: Literal["resolved", "cancelled"] = "cancelled" if cancelled else "resolved"
        return ClientToolAnswer(status, payload, is_error, message_id).to_resume_value()
    if pending.kind == "approval":
        answer = ApprovalAnswer(False) if cancelled else ApprovalAnswer.from_resume_value(payload)
        return answer.to_resume_value()
    return {"status": "cancelled"} if cancelled else payload


def _resume(answers: Iterable[tuple[PendingInterrupt, Any]]) -> Resume:
    pairs = list(answers)
    return Resume(
        {p.id: value for p, value in pairs},
        frozenset(p.tool_call_id for p, _ in pairs if p.tool_call_id),
    )


# -- the resume codec: the shapes a client answers in ---------------------------------------


def resume_from_entries(
    entries: Iterable[tuple[str, str, Any]], thread_id: str, pending: Sequence[PendingInterrupt]
) -> tuple[Resume, list[str]]:
    """AG-UI 1.0 ``resume[]`` entries ``(interruptId, status, payload)``; an entry may name a
    client tool by its tool call id, since that is all a client ever saw. Returns the resume
    and the ids that matched nothing (ignored unless nothing matched)."""
    if not pending:
        raise NoPendingInterruptError(thread_id)
    by_id = {p.id: p for p in pending}
    by_call = {p.tool_call_id: p for p in pending if p.client_tool and p.tool_call_id}
    answers: list[tuple[PendingInterrupt, Any]] = []
    unknown: list[str] = []
    for interrupt_id, status, payload in entries:
        target = by_id.get(interrupt_id) or by_call.get(interrupt_id)
        if target is None:
            unknown.append(interrupt_id)
            continue
        answers.append((target, encode_answer(target, payload, cancelled=status == "cancelled")))
    if not answers:
        raise InterruptMismatchError(
            f"No resume entry matches an interrupt pending on thread '{thread_id}' "
            f"(unknown: {', '.join(unknown)}).",
            pending,
        )
    return _resume(answers), unknown


def forwarded_command(props: Any) -> dict[str, Any] | None:
    """Gaunt Sloth's ``forwardedProps.command``, when it carries a ``resume``."""
    if isinstance(props, dict):
        command = props.get("command")
        if isinstance(command, dict) and "resume" in command:
            return command
    return None


def resume_from_command(
    command: Mapping[str, Any], thread_id: str, pending: Sequence[PendingInterrupt]
) -> Resume:
    """``forwardedProps.command``: ``resume`` answers the interrupt ``interruptEvent`` names,
    or the only one pending."""
    if not pending:
        raise NoPendingInterruptError(thread_id)
    event = command.get("interruptEvent")
    event = event if isinstance(event, dict) else {}
    wanted = [event.get(k) for k in ("toolCallId", "interruptId", "id") if event.get(k)]
    if wanted:
        target = next((p for p in pending for w in wanted if w in (p.id, p.tool_call_id)), None)
        if target is None:
            raise InterruptMismatchError(
                f"interruptEvent names {wanted[0]!r}, which is not pending on thread "
                f"'{thread_id}'.",
                pending,
            )
    elif len(pending) == 1:
        target = pending[0]
    else:
        raise InterruptMismatchError(
            f"{len(pending)} interrupts are pending on thread '{thread_id}'; name one with "
            "forwardedProps.command.interruptEvent.toolCallId.",
            pending,
        )
    return _resume([(target, encode_answer(target, command["resume"]))])


@dataclass(frozen=True)
class ToolResult:
    """A tool result a client sent as a trailing tool message."""

    tool_call_id: str
    content: Any
    is_error: bool = False
    message_id: str | None = None


def resume_from_tool_results(
    results: Iterable[ToolResult], pending: Sequence[PendingInterrupt]
) -> Resume | None:
    """Trailing tool messages answering pending client tool calls (what ``@ag-ui/client`` and
    CopilotKit send); ``None`` when none of them answers one."""
    by_call = {p.tool_call_id: p for p in pending if p.client_tool and p.tool_call_id}
    answers = [
        (target, encode_answer(target, r.content, is_error=r.is_error, message_id=r.message_id))
        for r in results
        if (target := by_call.get(r.tool_call_id)) is not None
    ]
    return _resume(answers) if answers else None
