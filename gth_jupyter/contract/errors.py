"""Coded errors: :class:`CodedError`, the one base of every error a caller can act on (a stable
snake_case ``code``, a ``message`` sentence and a JSON-shaped ``detail``), and the refusals the
agent raises before a run starts.

Each class says the HTTP ``status`` a host refuses with, beside its code: every agent refusal
declares its own (a subclass without one is refused as it is defined), and the protocol layer
(:func:`gth_jupyter.agui.errors.from_agent_error`) keeps the code, the sentence and that status,
so a client matches on the code whatever the transport (the comm sends the status too). The
other families (``ProtocolError``, with a status per refusal, ``ConfigError``,
``KernelClientError``, ``ModelConfigError``, ``FakeModelError``) live beside the code that raises
them and share this base; those no host answers as such keep its 500.
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
    "ParentRunNotFoundError",
    "RunBusyError",
    "ThreadRunNotFoundError",
]


class CodedError(Exception):
    """An error a caller can act on: ``code`` is stable (snake_case), ``message`` a sentence,
    ``detail`` JSON-shaped or ``None``. A family sets its ``code`` on the class; an instance may
    name a more precise one. ``status``: the HTTP status a host answers it with."""

    code = "error"
    status = 500

    def __init__(self, message: str, detail: Any = None, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        if code is not None:
            self.code = code


class AgentError(CodedError):
    """A refusal before a run starts; ``detail`` is a JSON object or ``None``. Each kind says
    its own HTTP ``status`` (a subclass that does not is refused as it is defined), so no new
    refusal is answered with another's."""

    code = "agent_error"
    status = 409

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "status" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must say the HTTP status a host refuses it with")

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message, detail)


class AgentNotFoundError(AgentError):
    code = "agent_not_found"
    status = 404

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(
            f"There is no agent named '{name}'. Known agents: {', '.join(known)}.",
            {"agents": list(known)},
        )


class AgentUnavailableError(AgentError):
    code = "agent_unavailable"
    status = 503

    def __init__(self, reason: BaseException | str) -> None:
        super().__init__(f"The agent could not be built from the configuration: {reason}")


class RunBusyError(AgentError):
    """A run is already in flight on this thread."""

    code = "run_busy"
    status = 409

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"A run is already in progress on thread '{thread_id}'. Retry when it has finished.",
            {"threadId": thread_id},
        )
        self.thread_id = thread_id


class ParentRunNotFoundError(AgentError):
    """``parentRunId`` names no run of this thread that ended on a checkpoint."""

    code = "parent_run_not_found"
    status = 409

    def __init__(self, thread_id: str, run_id: str) -> None:
        super().__init__(
            f"parentRunId {run_id[:80]!r} is not a run of thread '{thread_id}'. Name a run "
            "the thread view lists (GET gth/threads/{id}: branches), or the thread's own id to "
            "start from the beginning.",
            {"threadId": thread_id, "parentRunId": run_id[:512]},
        )


class ThreadRunNotFoundError(AgentError):
    """``GET gth/threads/{id}?run=ID`` names no run of the thread."""

    code = "run_not_found"
    status = 404

    def __init__(self, thread_id: str, run_id: str) -> None:
        super().__init__(
            f"Thread '{thread_id}' has no run {run_id[:80]!r}; its branches (GET "
            "gth/threads/{id}: branches) name the runs it has.",
            {"threadId": thread_id, "runId": run_id[:512]},
        )


class NoPendingInterruptError(AgentError):
    code = "no_pending_interrupt"
    status = 409

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            f"The request resumes thread '{thread_id}', but nothing on it is waiting for an "
            "answer.",
            {"threadId": thread_id},
        )


class InterruptMismatchError(AgentError):
    code = "interrupt_mismatch"
    status = 409

    def __init__(self, message: str, pending: Sequence[PendingInterrupt]) -> None:
        super().__init__(message, {"pending": describe_pending(pending)})


class InterruptPendingError(AgentError):
    code = "interrupt_pending"
    status = 409

    def __init__(self, pending: Sequence[PendingInterrupt]) -> None:
        super().__init__(
            "The thread is waiting for an answer to an interrupt; send it in 'resume' first.",
            {"pending": describe_pending(pending)},
        )
