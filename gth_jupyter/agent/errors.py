"""Refusals the agent raises before a run starts: each has a stable ``code`` and a sentence.

The protocol layer maps them to HTTP statuses (:func:`gth_jupyter.agui.errors.from_agent_error`)
and keeps the code and the sentence, so a client matches on the code whatever the transport.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .resume import PendingInterrupt

__all__ = [
    "AgentError",
    "AgentNotFoundError",
    "AgentUnavailableError",
    "InterruptMismatchError",
    "InterruptPendingError",
    "NoPendingInterruptError",
    "RunBusyError",
    "describe_pending",
]


class AgentError(Exception):
    """A refusal before a run starts; ``code`` is stable, ``detail`` JSON-shaped."""

    code = "agent_error"

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class AgentNotFoundError(AgentError):
    code = "agent_not_found"

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(
            f"There is no agent named '{name}'. Known agents: {', '.join(known)}.",
            {"agents": list(known)},
        )


class AgentUnavailableError(AgentError):
    code = "agent_unavailable"

    def __init__(self, reason: BaseException | str) -> None:
        super().__init__(f"The agent could not be built from the configuration: {reason}")


class RunBusyError(AgentError):
    """A run is already in flight on this thread."""

    code = "run_busy"

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"A run is already in progress on thread '{thread_id}'. Retry when it has finished.",
            {"threadId": thread_id},
        )
        self.thread_id = thread_id


class NoPendingInterruptError(AgentError):
    code = "no_pending_interrupt"

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"The request resumes thread '{thread_id}', but nothing on it is waiting for an "
            "answer.",
            {"threadId": thread_id},
        )


class InterruptMismatchError(AgentError):
    code = "interrupt_mismatch"

    def __init__(self, message: str, pending: Sequence[PendingInterrupt]) -> None:
        super().__init__(message, {"pending": describe_pending(pending)})


class InterruptPendingError(AgentError):
    code = "interrupt_pending"

    def __init__(self, pending: Sequence[PendingInterrupt]) -> None:
        super().__init__(
            "The thread is waiting for an answer to an interrupt; send it in 'resume' first.",
            {"pending": describe_pending(pending)},
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
