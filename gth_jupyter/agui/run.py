"""One AG-UI run: validate the request, claim the thread, plan, stream events.

``prepare_run`` (from request bytes) and ``plan_run`` (from a ``RunAgentInput``, for the
kernel's ``Session``) do everything that may refuse the request, so a refusal is a
``ProtocolError`` before any byte of the stream; ``stream_events`` can then only end in
``RUN_FINISHED`` or ``RUN_ERROR``. ``runtime_of`` asks a host's registry for an agent and turns
the agent's refusals into protocol ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import ag_ui.core as agui
from ag_ui.core import BaseEvent
from pydantic import ValidationError

from ..agent.runtime import Runtime, ThreadClaim
from ..contract.errors import AgentError, RunBusyError
from ..contract.events import TextEvent
from ..contract.kernel import KernelAccess
from ..contract.run import RunEnd
from . import errors
from .dialect import Dialect, dialect_of, legacy_events
from .mapping import EventMapper
from .owners import Requester, admit_thread
from .plan import Decision, decide

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "KernelResolver",
    "PreparedRun",
    "RuntimeSource",
    "detached",
    "kernel_id",
    "parse_input",
    "plan_run",
    "prepare_run",
    "runtime_of",
    "stream_events",
    "turn_id",
]

log = logging.getLogger(__name__)

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


def parse_input(body: bytes, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> agui.RunAgentInput:
    """The request body as a validated ``RunAgentInput``, or a ``ProtocolError``."""
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
    turn_id(request)  # a malformed turn or kernel id is refused here, before anything else
    kernel_id(request)
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


#: How a host turns a request's kernel id into the kernel its tools reach (``None``: none); it
#: raises a ``ProtocolError`` (``404 kernel_not_found``) for a kernel it does not hold.
KernelResolver = Callable[[str | None], KernelAccess | None]


class RuntimeSource(Protocol):
    """What a host hands the protocol layer: its agents by name (an ``AgentRegistry``)."""

    async def runtime(self, name: str, owner: str | None = None) -> Runtime: ...


async def runtime_of(source: RuntimeSource, name: str, owner: str | None = None) -> Runtime:
    """Agent ``name``'s runtime for user ``owner`` (whose MCP sign-ins its tools use; by
    default the host's owner), or the ``ProtocolError`` that refuses it."""
    try:
        return await source.runtime(name, owner)
    except AgentError as exc:
        raise errors.from_agent_error(exc) from None


@dataclass
class PreparedRun:
    """A run that passed every check: its thread is claimed and its plan decided."""

    runtime: Runtime
    request: agui.RunAgentInput
    decision: Decision
    claim: ThreadClaim
    #: The AG-UI dialect the client reads (see ``dialect.py``).
    dialect: Dialect = "1.0"


async def plan_run(
    runtime: Runtime,
    request: agui.RunAgentInput,
    *,
    kernel: KernelAccess | None = None,
    protocol: str = "auto",
    requester: Requester | None = None,
) -> PreparedRun:
    """Claims the request's thread and decides its plan, or raises a ``ProtocolError``;
    ``kernel`` is where the run's kernel tools work; ``protocol`` (the command's
    ``agui.protocol``) forces a dialect or, ``auto``, lets the request's ``protocolVersion``
    tell it. With a ``requester`` (an HTTP host), the thread is the requester's own of that id
    (see ``owners.scoped_id``), checked before anything else."""
    dialect = dialect_of(request, protocol)
    # The thread's key in the store: the request's id, scoped by its user (see ``owners``).
    key = request.thread_id
    if requester is not None:
        key = await admit_thread(runtime, request.thread_id, requester, write=True)
    try:
        claim = await runtime.claim(key, request.run_id)
    except RunBusyError:
        # Named as the client names it, never by its key.
        raise errors.from_agent_error(RunBusyError(request.thread_id)) from None
    except AgentError as exc:
        raise errors.from_agent_error(exc) from None
    try:
        state = await runtime.thread_state(key)
        decision = decide(request, state, turn=turn_id(request))
        decision.plan.thread_id = key
        decision.plan.kernel = kernel
        decision.plan.before = state  # the run reuses this read of the thread
        decision.plan.owner = requester.name if requester is not None else ""
    except AgentError as exc:
        claim.release()
        raise errors.from_agent_error(exc) from None
    except BaseException:
        claim.release()
        raise
    return PreparedRun(runtime, request, decision, claim, dialect)


async def prepare_run(
    runtime: Runtime,
    body: bytes,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    kernels: KernelResolver | None = None,
    protocol: str = "auto",
    requester: Requester | None = None,
) -> PreparedRun:
    """``plan_run`` for a request body, parsed and validated first; ``kernels`` finds the
    kernel the request names (before the thread is claimed, so a refusal claims nothing)."""
    request = parse_input(body, max_body_bytes)
    kernel = kernels(kernel_id(request)) if kernels is not None else None
    return await plan_run(runtime, request, kernel=kernel, protocol=protocol, requester=requester)


async def stream_events(prepared: PreparedRun) -> AsyncGenerator[BaseEvent, None]:
    """The run's AG-UI events; always ends with RUN_FINISHED or RUN_ERROR unless cancelled.

    A 0.x client gets the few events its dialect shapes differently rewritten
    (``dialect.legacy_events``); token deltas never go that way."""
    request = prepared.request
    mapper = EventMapper(request.thread_id, request.run_id, prepared.decision.client_answered)
    map_item = mapper.map
    adapt = legacy_events if prepared.dialect == "0.x" else None
    try:
        if adapt is None:
            yield mapper.start()
        else:
            for event in adapt(mapper.start()):
                yield event
        text_delta = mapper.text_delta
        async with contextlib.aclosing(prepared.runtime.stream(prepared.decision.plan)) as items:
            async for item in items:
                # Nearly every item of a long answer is the next token of the open text.
                delta = text_delta(item.delta) if type(item) is TextEvent else None
                if delta is not None:
                    yield delta
                    continue
                events = mapper.finish(item) if isinstance(item, RunEnd) else map_item(item)
                if adapt is None:
                    for event in events:
                        yield event
                else:
                    for event in events:
                        for out in adapt(event):
                            yield out
        if not mapper.finished:
            for event in mapper.finish(RunEnd([])):
                if adapt is None:
                    yield event
                else:
                    for out in adapt(event):
                        yield out
    except (asyncio.CancelledError, GeneratorExit):
        raise
    except Exception as exc:
        log.exception("Run %s on thread %s failed", request.run_id, request.thread_id)
        for event in mapper.fail(exc):
            yield event
    finally:
        prepared.claim.release()
