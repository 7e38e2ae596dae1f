"""Refusals before a stream opens: an HTTP status, a stable ``code`` and a sentence."""

from __future__ import annotations

from typing import Any


class ProtocolError(Exception):
    """A request the endpoint refuses; rendered as JSON ``{code, message, detail?}``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        detail: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.detail = detail
        self.headers = headers or {}

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail is not None:
            body["detail"] = self.detail
        return body


def invalid_json(reason: str) -> ProtocolError:
    return ProtocolError(400, "invalid_json", f"The request body is not valid JSON: {reason}.")


def invalid_input(message: str, errors: list[dict[str, Any]] | None = None) -> ProtocolError:
    detail = {"errors": errors} if errors else None
    return ProtocolError(422, "invalid_input", message, detail)


def body_too_large(size: int, limit: int) -> ProtocolError:
    return ProtocolError(
        413,
        "body_too_large",
        f"The request body is {size} bytes; the limit is {limit} bytes.",
        {"size": size, "limit": limit},
    )


def agent_not_found(name: str, known: list[str]) -> ProtocolError:
    return ProtocolError(
        404,
        "agent_not_found",
        f"There is no agent named '{name}'. Known agents: {', '.join(known)}.",
        {"agents": known},
    )


def run_busy(thread_id: str, retry_after: int = 2) -> ProtocolError:
    return ProtocolError(
        409,
        "run_busy",
        f"A run is already in progress on thread '{thread_id}'. Retry when it has finished.",
        {"threadId": thread_id},
        {"Retry-After": str(retry_after)},
    )


def no_pending_interrupt(thread_id: str) -> ProtocolError:
    return ProtocolError(
        409,
        "no_pending_interrupt",
        f"The request resumes thread '{thread_id}', but nothing on it is waiting for an answer.",
        {"threadId": thread_id},
    )


def interrupt_mismatch(message: str, pending: list[dict[str, Any]]) -> ProtocolError:
    return ProtocolError(409, "interrupt_mismatch", message, {"pending": pending})


def interrupt_pending(pending: list[dict[str, Any]]) -> ProtocolError:
    return ProtocolError(
        409,
        "interrupt_pending",
        "The thread is waiting for an answer to an interrupt; send it in 'resume' first.",
        {"pending": pending},
    )
