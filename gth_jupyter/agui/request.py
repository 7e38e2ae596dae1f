"""Reading a run request: the body as a validated ``RunAgentInput``, and what its
``forwardedProps`` say (the widget turn, the notebook kernel, whether to detach), each read once.

:func:`parse_request` refuses anything malformed with a ``ProtocolError`` (``invalid_json``,
``invalid_input``, ``body_too_large``) before a thread is touched, JSON nested deeper than
``MAX_NESTING`` levels anywhere in it included (it would break the run's serialization after
its stream started); planning
(:meth:`~gth_jupyter.agui.run.ThreadRun.plan`) then works from the :class:`RunRequest` alone.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import ag_ui.core as agui
from pydantic import ValidationError

from ..config.effective import DEFAULT_MAX_BODY_BYTES
from . import errors

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_NESTING",
    "RunRequest",
    "cell_id",
    "detached",
    "kernel_id",
    "parse_input",
    "parse_request",
    "read_request",
    "turn_id",
]

MAX_ID_LENGTH = 512
#: How many levels of objects and arrays the JSON a client sends may nest, counted from each
#: field of the request (``state``, ``forwardedProps``, ``messages``, ``tools``, ``context``,
#: ``resume``) and from the JSON a string carries (tool-call arguments, a tool's result). Real
#: requests nest a few levels (a JSON Schema a dozen). The run itself breaks at about 250, after
#: its stream has started: pydantic's dump of an event (``STATE_SNAPSHOT``) and orjson stop at
#: 255 levels, the checkpointer's ormsgpack at 256 (tool-call arguments at 253, inside the
#: message that carries them); Python's ``json`` at about 1000.
MAX_NESTING = 200
#: How much of a path a refusal names.
_PATH_SHOWN = 120
_CONTAINERS = frozenset({dict, list})  # what json.loads nests
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
    #: The notebook cell whose turn it runs (``forwardedProps.gth.cellId``): running a cell
    #: again replaces its earlier turn (see ``agui/run.py``).
    cell: str | None = None


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
    return RunRequest(
        request, turn_id(request), kernel_id(request), detached(request), cell_id(request)
    )


def _validated(body: bytes, max_body_bytes: int) -> agui.RunAgentInput:
    if len(body) > max_body_bytes:
        raise errors.body_too_large(len(body), max_body_bytes)
    try:
        data = json.loads(body)
    except RecursionError:  # nested far deeper than the limit: too deep to even read
        raise _too_deep("The request body", "(root)") from None
    except ValueError as exc:
        raise errors.invalid_json(str(exc) or type(exc).__name__) from None
    if not isinstance(data, dict):
        raise errors.invalid_input("The request body must be a JSON object (a RunAgentInput).")
    _check_nesting(data)
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
    ids = [("threadId", request.thread_id), ("runId", request.run_id)]
    if request.parent_run_id is not None:
        ids.append(("parentRunId", request.parent_run_id))
    for name, value in ids:
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


def _check_nesting(data: dict[str, Any]) -> None:
    """Refuses JSON nested deeper than ``MAX_NESTING`` anywhere in the body, and in the JSON a
    string carries that the run parses (tool-call arguments, a tool result, a resume payload),
    naming where."""
    for key, value in data.items():
        _refuse_deep(str(key), value)
    for field, text in _json_strings(data):
        if not text.lstrip().startswith(("{", "[")):
            continue
        try:
            value = json.loads(text)
        except RecursionError:  # deeper than the parser goes, so far deeper than the limit
            raise _too_deep(field, field) from None
        except ValueError:
            continue  # not JSON: the run reads it as text
        _refuse_deep(field, value)


def _refuse_deep(field: str, value: Any) -> None:
    keys = _deeper_than_limit(value)
    if keys is not None:
        path = field + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)
        raise _too_deep(field, path)


def _deeper_than_limit(value: Any) -> list[str | int] | None:
    """The keys to the first object or array nested more than ``MAX_NESTING`` levels deep in
    ``value`` (``value`` itself is level 1), or ``None``. Level by level, without recursion;
    each level's containers are picked out by a comprehension, so a 5 MB body of small
    containers costs about what parsing it did."""
    if type(value) not in _CONTAINERS:
        return None
    levels: list[list[Any]] = [[value]]
    while len(levels) <= MAX_NESTING:
        below: list[Any] = []
        for node in levels[-1]:
            below += [
                c for c in (node.values() if type(node) is dict else node) if type(c) in _CONTAINERS
            ]
        if not below:
            return None
        levels.append(below)
    # Too deep: the way down to the first container of the deepest level, parent by parent.
    keys: list[str | int] = []
    child = levels[-1][0]
    for parents in reversed(levels[:-1]):
        for node in parents:
            key = _key_of(node, child)
            if key is not None:
                keys.append(key)
                child = node
                break
    return keys[::-1]


def _key_of(node: Any, child: Any) -> str | int | None:
    """The key (or index) under which ``node`` holds ``child`` itself, or ``None``."""
    pairs = node.items() if type(node) is dict else enumerate(node)
    return next((key for key, value in pairs if value is child), None)


def _too_deep(field: str, path: str) -> errors.ProtocolError:
    shown = path if len(path) <= _PATH_SHOWN else path[:_PATH_SHOWN] + "…"
    problem = f"nested deeper than {MAX_NESTING} levels"
    return errors.invalid_input(
        f"{field} is {problem} at {shown}" + ("" if shown.endswith("…") else "."),
        [{"path": shown, "message": problem, "type": "too_deep"}],
    )


def _json_strings(data: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """The strings of the body that the run parses as JSON, with their paths: tool-call
    arguments, a tool message's text content, a resume entry's string payload."""
    messages = data.get("messages")
    for i, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and isinstance(message.get("content"), str):
            yield f"messages[{i}].content", message["content"]
        key = "toolCalls" if "toolCalls" in message else "tool_calls"
        calls = message.get(key)
        for j, call in enumerate(calls if isinstance(calls, list) else ()):
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if isinstance(arguments, str):
                yield f"messages[{i}].{key}[{j}].function.arguments", arguments
    resume = data.get("resume")
    for i, entry in enumerate(resume if isinstance(resume, list) else ()):
        if isinstance(entry, dict) and isinstance(entry.get("payload"), str):
            yield f"resume[{i}].payload", entry["payload"]


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


def cell_id(request: agui.RunAgentInput) -> str | None:
    """``forwardedProps.gth.cellId``: the notebook cell (its nbformat id) the request's new
    turn runs for; ``None`` when absent. A malformed one is ``invalid_input``."""
    return _gth_prop(request, "cellId")


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
