"""Refusals before a stream opens: an HTTP status, a stable ``code`` and a sentence.

Every refusal a host answers is made here, so each has one home: of the request itself (its
size, its JSON, its shape), of a route (no such route, grant or sign-in; the standalone server's
host and token checks), of a widget's malformed comm message. Refusals the agent raises
(:class:`~gth_jupyter.contract.errors.AgentError`: no such agent, a busy thread, an answer to
nothing) keep their code and the HTTP status their class says, through :func:`from_agent_error`.
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
    "grant_not_found",
    "host_not_allowed",
    "invalid_input",
    "invalid_json",
    "invalid_message",
    "journal_unavailable",
    "kernel_forbidden",
    "kernel_not_found",
    "oauth_state_mismatch",
    "oauth_state_unknown",
    "route_not_found",
    "run_elsewhere",
    "run_exists",
    "run_not_found",
    "thread_not_found",
    "turn_not_found",
    "unauthorized",
]

#: What a ``409 run_busy`` asks a client to wait before it tries again.
RETRY_AFTER_SECONDS = 2


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
    """The HTTP refusal for an agent-level error: its status (its class says it), code and
    sentence unchanged."""
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if isinstance(exc, RunBusyError) else None
    return ProtocolError(exc.status, exc.code, exc.message, exc.detail, headers)


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


def turn_not_found(thread: str, turn: str) -> ProtocolError:
    """No turn of this id on the requester's thread (nor is another user's revealed)."""
    return ProtocolError(
        404,
        "turn_not_found",
        f"Thread {thread[:80]!r} has no turn {turn[:80]!r}; the thread view (GET "
        "gth/threads/{id}: turns) names the turns it has.",
    )


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


def invalid_message(why: str) -> ProtocolError:
    """A widget's comm message the kernel cannot read (the comm's own refusals, beside HTTP's)."""
    return ProtocolError(400, "invalid_message", f"The widget sent a malformed message: {why}.")


def route_not_found() -> ProtocolError:
    """A path no route serves (the standalone server answers every other path so)."""
    return ProtocolError(404, "not_found", "There is no such route.")


def grant_not_found(grant: str) -> ProtocolError:
    return ProtocolError(
        404,
        "grant_not_found",
        f"There is no standing approval '{grant}'; it may have been revoked already, or the "
        "server restarted.",
    )


def oauth_state_mismatch() -> ProtocolError:
    """An MCP sign-in another user started: theirs goes on waiting, no token is stored."""
    return ProtocolError(
        403,
        "oauth_state_mismatch",
        "This MCP server authorization was started by another user; only they can complete it. "
        "Start your own from your widget.",
    )


def oauth_state_unknown() -> ProtocolError:
    return ProtocolError(
        400,
        "oauth_state_unknown",
        "No MCP server authorization waits for this state; it may have finished already, or "
        "the server restarted. Start the authorization again.",
    )


def host_not_allowed() -> ProtocolError:
    """The standalone server on loopback, asked under another ``Host`` (DNS rebinding)."""
    return ProtocolError(
        403,
        "host_not_allowed",
        "This server listens on loopback only and answers requests addressed to localhost, "
        "127.0.0.1 or [::1]; a page whose domain points at this machine may not use it.",
    )


def unauthorized() -> ProtocolError:
    """The standalone server without its token."""
    return ProtocolError(
        401,
        "unauthorized",
        "A valid token is required: send 'Authorization: token <T>'.",
        headers={"WWW-Authenticate": 'Token realm="gth-jupyter"'},
    )
