"""One AG-UI run: claim the thread, plan, stream events (the request is read in ``request.py``).

``prepare_run`` (from request bytes) and ``plan_run`` (from a read :class:`RunRequest`, or a
``RunAgentInput`` such as the kernel's ``Session`` builds) do everything that may refuse the
request, so a refusal is a
``ProtocolError`` before any byte of the stream; ``stream_events`` can then only end in
``RUN_FINISHED`` or ``RUN_ERROR``. ``runtime_of`` asks a host's registry for an agent and turns
the agent's refusals into protocol ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Protocol

import ag_ui.core as agui
from ag_ui.core import BaseEvent

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
from .request import DEFAULT_MAX_BODY_BYTES, RunRequest, parse_request, read_request

__all__ = [
    "KernelResolver",
    "PreparedRun",
    "RuntimeSource",
    "plan_run",
    "prepare_run",
    "runtime_of",
    "stream_events",
]

log = logging.getLogger(__name__)

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
    request: RunRequest | agui.RunAgentInput,
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
    read = request if isinstance(request, RunRequest) else read_request(request)
    given = read.input
    dialect = dialect_of(given, protocol)
    # The thread's key in the store: the request's id, scoped by its user (see ``owners``).
    key = given.thread_id
    if requester is not None:
        key = await admit_thread(runtime, given.thread_id, requester, write=True)
    try:
        claim = await runtime.claim(key, given.run_id)
    except RunBusyError:
        # Named as the client names it, never by its key.
        raise errors.from_agent_error(RunBusyError(given.thread_id)) from None
    except AgentError as exc:
        raise errors.from_agent_error(exc) from None
    try:
        state = await runtime.thread_state(key)
        decision = decide(
            given,
            state,
            turn=read.turn,
            thread_key=key,
            kernel=kernel,
            owner=requester.name if requester is not None else "",
        )
    except AgentError as exc:
        claim.release()
        raise errors.from_agent_error(exc) from None
    except BaseException:
        claim.release()
        raise
    return PreparedRun(runtime, given, decision, claim, dialect)


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
    request = parse_request(body, max_body_bytes)
    kernel = kernels(request.kernel_id) if kernels is not None else None
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
