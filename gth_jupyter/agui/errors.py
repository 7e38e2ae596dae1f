"""Refusals before a stream opens: an HTTP status, a stable ``code`` and a sentence.

Refusals of the request itself (its size, its JSON, its shape) are made here; refusals the
agent raises (:class:`~gth_jupyter.contract.errors.AgentError`: no such agent, a busy thread, an
answer to nothing) keep their code and get their HTTP status from :func:`from_agent_error`.
"""

from __future__ import annotations

from typing import Any

from ..contract.errors import AgentError, CodedError, RunBusyError

__all__ = [
    "RETRY_AFTER_SECONDS",
    "ProtocolError",
    "body_too_large",
    "events_expired",
    "from_agent_error",
    "invalid_input",
    "invalid_json",
    "journal_unavailable",
    "kernel_forbidden",
    "kernel_not_found",
    "run_elsewhere",
    "run_exists",
    "run_not_found",
    "thread_not_found",
]

#: What a ``409 run_busy`` asks a client to wait before it tries again.
RETRY_AFTER_SECONDS = 2

_AGENT_STATUS = {
    "agent_not_found": 404,
    "agent_unavailable": 503,
    "run_busy": 409,
    "no_pending_interrupt": 409,
    "interrupt_mismatch": 409,
    "interrupt_pending": 409,
}


class ProtocolError(CodedError):
    """A request the endpoint refuses with an HTTP ``status``; rendered as JSON
    ``{code, message, detail?}``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        detail: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message, detail, code=code)
        self.status = status
        self.headers = headers or {}

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail is not None:
            body["detail"] = self.detail
        return body


def from_agent_error(exc: AgentError) -> ProtocolError:
    """The HTTP refusal for an agent-level error, its code and sentence unchanged."""
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if isinstance(exc, RunBusyError) else None
    return ProtocolError(
        _AGENT_STATUS.get(exc.code, 409), exc.code, exc.message, exc.detail, headers
    )


def invalid_json(reason: str) -> ProtocolError:
    return ProtocolError(400, "invalid_json", f"The request body is not valid JSON: {reason}.")


def invalid_input(message: str, errors: list[dict[str, Any]] | None = None) -> ProtocolError:
    detail = {"errors": errors} if errors else None
    return ProtocolError(422, "invalid_input", message, detail)


def kernel_not_found(kernel: str) -> ProtocolError:
    """``forwardedProps.gth.kernelId`` names a kernel this server does not run."""
    return ProtocolError(
        404,
        "kernel_not_found",
        f"No kernel {kernel[:80]!r} runs on this server; the kernel tools need the id of a "
        "running kernel (forwardedProps.gth.kernelId).",
    )


def kernel_forbidden(kernel: str) -> ProtocolError:
    """The server's authorizer does not let the requester run code in kernels (``execute`` on
    ``kernels``); every kernel tool does, the variable readers included."""
    return ProtocolError(
        403,
        "kernel_forbidden",
        f"You may not use kernel {kernel[:80]!r}: this Jupyter server's authorizer does not let "
        "you execute code in kernels, and the kernel tools (list_variables, describe_variable, "
        "run_python) run code there. Ask the server's administrator for kernel access, or run "
        "the agent without a kernel.",
    )


def body_too_large(size: int, limit: int) -> ProtocolError:
    return ProtocolError(
        413,
        "body_too_large",
        f"The request body is {size} bytes; the limit is {limit} bytes.",
        {"size": size, "limit": limit},
    )


def thread_not_found(thread: str) -> ProtocolError:
    """Another user's thread, answered as if it did not exist (its existence is not revealed)."""
    return ProtocolError(404, "thread_not_found", f"There is no thread {thread[:80]!r}.")


def run_not_found(run: str) -> ProtocolError:
    """No run of this id is kept (it never existed, ended too long ago, or is another user's)."""
    return ProtocolError(
        404,
        "run_not_found",
        f"There is no run {run[:80]!r} to attach to; it may have ended too long ago. Load the "
        "thread (GET gth/threads/{id}) for what it produced.",
    )


def run_exists(run: str) -> ProtocolError:
    """A ``runId`` already used by a run on another thread (or of another user)."""
    return ProtocolError(
        409,
        "run_exists",
        f"The runId {run[:80]!r} belongs to another run; send a new runId to start a run.",
    )


def run_elsewhere(run: str) -> ProtocolError:
    """A run another server process streams (found in the shared journal): stopped there."""
    return ProtocolError(
        409,
        "run_elsewhere",
        f"Run {run[:80]!r} streams in another server process; stop it there, or wait for it to "
        "end.",
    )


def events_expired(run: str) -> ProtocolError:
    """The frames after the client's ``Last-Event-ID`` are no longer kept."""
    return ProtocolError(
        410,
        "events_expired",
        f"The events of run {run[:80]!r} after that id are no longer kept; load the thread "
        "(GET gth/threads/{id}) instead.",
    )


def journal_unavailable(run: str) -> ProtocolError:
    """The shared journal (Redis) could not be read for a re-attach."""
    return ProtocolError(
        503,
        "journal_unavailable",
        f"The events of run {run[:80]!r} cannot be read right now (the shared journal is "
        "unreachable); try again shortly.",
        headers={"Retry-After": "2"},
    )
