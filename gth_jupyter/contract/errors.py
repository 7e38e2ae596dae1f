"""Coded errors: :class:`CodedError`, the one base of every error a caller can act on (a stable
snake_case ``code``, a ``message`` sentence and a JSON-shaped ``detail``), and the refusals the
agent raises before a run starts.

The protocol layer maps the agent's refusals to HTTP statuses
(:func:`gth_jupyter.agui.errors.from_agent_error`) and keeps the code and the sentence, so a
client matches on the code whatever the transport. The other families (``ProtocolError``,
``ConfigError``, ``KernelClientError``, ``ModelConfigError``, ``FakeModelError``) live beside the
code that raises them and share this base.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .pending import describe_pending

if TYPE_CHECKING:
    from .pending import PendingInterrupt

__all__ = [
    "AgentError",
    "AgentNotFoundError",
    "AgentUnavailableError",
    "CodedError",
    "InterruptMismatchError",
    "InterruptPendingError",
    "NoPendingInterruptError",
    "RunBusyError",
]


class CodedError(Exception):
    """An error a caller can act on: ``code`` is stable (snake_case), ``message`` a sentence,
    ``detail`` JSON-shaped or ``None``. A family sets its ``code`` on the class; an instance may
    name a more precise one."""

    code = "error"

    def __init__(self, message: str, detail: Any = None, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        if code is not None:
            self.code = code


class AgentError(CodedError):
    """A refusal before a run starts; ``detail`` is a JSON object or ``None``."""

    code = "agent_error"

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message, detail)


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
