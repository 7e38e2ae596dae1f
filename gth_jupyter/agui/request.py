"""Reading a run request: the body as a validated ``RunAgentInput``, and what its
``forwardedProps`` say (the widget turn, the notebook kernel, whether to detach), each read once.

:func:`parse_request` refuses anything malformed with a ``ProtocolError`` (``invalid_json``,
``invalid_input``, ``body_too_large``) before a thread is touched; planning
(:func:`~gth_jupyter.agui.run.plan_run`) then works from the :class:`RunRequest` alone.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

import ag_ui.core as agui
from pydantic import ValidationError

from . import errors

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "MAX_ID_LENGTH",
    "RunRequest",
    "detached",
    "kernel_id",
    "parse_input",
    "parse_request",
    "read_request",
    "turn_id",
]

DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024
MAX_ID_LENGTH = 512
# What every provider accepts as a function name.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


_SNAKE = {"threadId": "thread_id", "runId": "run_id"}


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


@dataclass(frozen=True)
class RunRequest:
    """A validated request, and what its ``forwardedProps`` say (read once, by
    :func:`read_request`)."""

    input: agui.RunAgentInput
    #: The widget turn its user messages start or continue (``forwardedProps.gth.turnId``).
    turn: str | None = None
    #: The notebook kernel its kernel tools work in (``forwardedProps.gth.kernelId``).
    kernel_id: str | None = None
    #: Whether the run goes on when its client's connection drops (``forwardedProps.detach``).
    detach: bool = False


def parse_request(body: bytes, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> RunRequest:
    """The request body, validated and read, or a ``ProtocolError``."""
    return read_request(_validated(body, max_body_bytes))


def parse_input(body: bytes, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> agui.RunAgentInput:
    """The request body as a validated ``RunAgentInput`` (its turn and kernel ids checked too),
    or a ``ProtocolError``."""
    return parse_request(body, max_body_bytes).input


def read_request(request: agui.RunAgentInput) -> RunRequest:
    """What ``request``'s ``forwardedProps`` say; a malformed turn or kernel id is
    ``invalid_input``."""
    return RunRequest(request, turn_id(request), kernel_id(request), detached(request))


def _validated(body: bytes, max_body_bytes: int) -> agui.RunAgentInput:
    if len(body) > max_body_bytes:
        raise errors.body_too_large(len(body), max_body_bytes)
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise errors.invalid_json(str(exc) or type(exc).__name__) from None
    if not isinstance(data, dict):
        raise errors.invalid_input("The request body must be a JSON object (a RunAgentInput).")
    _legacy_binary_parts(data)
    # Gaunt Sloth generates both ids when a client leaves them out; RUN_STARTED tells it them.
    for key in ("threadId", "runId"):
        if data.get(key) is None and data.get(_SNAKE[key]) is None:
            data[key] = str(uuid.uuid4())
    try:
        request = agui.RunAgentInput.model_validate(data)
    except ValidationError as exc:
        found = [
            {"path": _path(tuple(e["loc"])), "message": e["msg"], "type": e["type"]}
            for e in exc.errors(include_url=False, include_input=False)
        ]
        first = found[0]
        raise errors.invalid_input(
            f"Invalid RunAgentInput at {first['path'] or '(root)'}: {first['message']}.", found
        ) from None
    for name, value in (("threadId", request.thread_id), ("runId", request.run_id)):
        if not value.strip() or len(value) > MAX_ID_LENGTH:
            raise errors.invalid_input(
                f"{name} must be a non-empty string of at most {MAX_ID_LENGTH} characters.",
                [{"path": name, "message": "invalid id", "type": "value_error"}],
            )
    seen: set[str] = set()
    for i, tool in enumerate(request.tools or []):
        if not TOOL_NAME.match(tool.name) or tool.name in seen:
            problem = "is repeated" if tool.name in seen else "must match ^[A-Za-z0-9_-]{1,64}$"
            raise errors.invalid_input(
                f"tools[{i}].name {tool.name!r} {problem}.",
                [{"path": f"tools[{i}].name", "message": problem, "type": "value_error"}],
            )
        seen.add(tool.name)
        if tool.parameters is not None and not isinstance(tool.parameters, dict):
            raise errors.invalid_input(
                f"tools[{i}].parameters must be a JSON Schema object.",
                [{"path": f"tools[{i}].parameters", "message": "not an object", "type": "type"}],
            )
    return request


def _gth_prop(request: agui.RunAgentInput, key: str) -> str | None:
    """``forwardedProps.gth.<key>``, a non-empty id; a malformed one is ``invalid_input``."""
    props = request.forwarded_props
    gth = props.get("gth") if isinstance(props, dict) else None
    if not isinstance(gth, dict) or gth.get(key) is None:
        return None
    value = gth[key]
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_LENGTH:
        path = f"forwardedProps.gth.{key}"
        raise errors.invalid_input(
            f"{path} must be a non-empty string of at most {MAX_ID_LENGTH} characters.",
            [{"path": path, "message": "invalid id", "type": "value_error"}],
        )
    return value


def _legacy_binary_parts(data: dict[str, Any]) -> None:
    """Pre-1.0 clients send media as ``{"type": "binary", "mimeType", "data" | "url"}`` parts;
    1.0 has ``image`` / ``audio`` / ``video`` / ``document`` parts with a ``source``. Rewritten
    in place (as ``@ag-ui/client``'s own compatibility layer does), before validation."""
    messages = data.get("messages")
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for index, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "binary":
                continue
            mime = part.get("mimeType")
            if not isinstance(mime, str):
                continue  # left as it is: validation names the problem
            if isinstance(part.get("data"), str):
                source = {"type": "data", "value": part["data"], "mimeType": mime}
            elif isinstance(part.get("url"), str):
                source = {"type": "url", "value": part["url"], "mimeType": mime}
            else:
                continue
            kind = mime.split("/", 1)[0]
            content[index] = {
                "type": kind if kind in ("image", "audio", "video") else "document",
                "source": source,
            }


def turn_id(request: agui.RunAgentInput) -> str | None:
    """``forwardedProps.gth.turnId``: the widget turn the request's user messages start or
    continue (see ``TURN_KEY``); ``None`` when absent. A malformed one is ``invalid_input``."""
    return _gth_prop(request, "turnId")


def detached(request: agui.RunAgentInput) -> bool:
    """``forwardedProps.detach: true``: the run goes on when the client's connection drops (the
    widget always asks so); otherwise a lost client cancels its run."""
    props = request.forwarded_props
    return isinstance(props, dict) and props.get("detach") is True


def kernel_id(request: agui.RunAgentInput) -> str | None:
    """``forwardedProps.gth.kernelId``: the notebook kernel the widget lives in, whose live
    namespace the kernel tools work in; ``None`` when absent. Other clients may put it at
    ``forwardedProps.kernelId``."""
    found = _gth_prop(request, "kernelId")
    props = request.forwarded_props
    if found is None and isinstance(props, dict) and props.get("kernelId") is not None:
        value = props["kernelId"]
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_LENGTH:
            raise errors.invalid_input(
                f"forwardedProps.kernelId must be a non-empty string of at most {MAX_ID_LENGTH} "
                "characters.",
                [
                    {
                        "path": "forwardedProps.kernelId",
                        "message": "invalid id",
                        "type": "value_error",
                    }
                ],
            )
        found = value
    return found
