"""What a suspended thread waits on: a :class:`PendingInterrupt` per interrupt, read from the
interrupt's own value, and how a refusal describes them to a client."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .spec import spec

__all__ = [
    "APPROVAL_INTERRUPT",
    "APPROVAL_REASON",
    "CLIENT_TOOL_INTERRUPT",
    "CLIENT_TOOL_REASON",
    "InterruptKind",
    "PendingInterrupt",
    "describe_pending",
]

#: Marks an interrupt raised for a client tool call.
CLIENT_TOOL_INTERRUPT = "gth.client_tool"
#: Marks an interrupt raised by the approvals gate.
APPROVAL_INTERRUPT = "gth.approval"
#: The AG-UI ``reason`` of an approval's interrupt, and of a client tool's: the widget tells them
#: by it (one spec, ``contract/spec/approvals.json``).
APPROVAL_REASON: str = spec("approvals")["reason"]
CLIENT_TOOL_REASON: str = spec("approvals")["clientToolReason"]

InterruptKind = Literal["client_tool", "approval", "other"]


@dataclass(frozen=True)
class PendingInterrupt:
    """An interrupt the thread is suspended on."""

    id: str
    value: Any
    tool_call_id: str | None = None
    tool_name: str | None = None
    kind: InterruptKind = "other"

    @property
    def client_tool(self) -> bool:
        return self.kind == "client_tool"

    @classmethod
    def of(cls, interrupt_id: str, value: Any) -> PendingInterrupt:
        """Reads what an interrupt value says about itself (its kind, tool call and tool)."""
        if not isinstance(value, dict):
            return cls(interrupt_id, value)
        kind: InterruptKind = "other"
        if value.get("type") == CLIENT_TOOL_INTERRUPT:
            kind = "client_tool"
        elif value.get("type") == APPROVAL_INTERRUPT:
            kind = "approval"
        call_id = value.get("toolCallId") or value.get("tool_call_id")
        name = value.get("name") if kind == "client_tool" else value.get("toolName")
        return cls(
            interrupt_id,
            value,
            call_id if isinstance(call_id, str) else None,
            name if isinstance(name, str) else None,
            kind,
        )


def describe_pending(pending: Sequence[PendingInterrupt]) -> list[dict[str, Any]]:
    """What a refusal tells the client about the interrupts a thread waits on."""
    out: list[dict[str, Any]] = []
    for p in pending:
        item: dict[str, Any] = {"interruptId": p.id, "clientTool": p.client_tool}
        if p.tool_call_id:
            item["toolCallId"] = p.tool_call_id
        if p.tool_name:
            item["toolName"] = p.tool_name
        out.append(item)
    return out
