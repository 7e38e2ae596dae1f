"""One AG-UI run on its thread: claimed, planned, streamed, let go (the request is read in
``request.py``).

A :class:`ThreadRun` is one run from the claim of its thread to the end of its stream, and the
one holder of that claim. :meth:`ThreadRun.plan` does everything that may refuse the request
(the thread's owner, the claim, the plan), so a refusal is a ``ProtocolError`` before any byte
of the stream, and a refused run holds nothing; the planned run then streams once, as AG-UI
events (:meth:`ThreadRun.events`, which can only end in ``RUN_FINISHED`` or ``RUN_ERROR``) or as
the run contract's items (:meth:`ThreadRun.items`, for a reader in this process). However it
ends (finished, failed, cancelled, or closed before it streamed: :meth:`ThreadRun.aclose`), the
thread is let go in one place, as the stream ends. Hosts start runs through
``RunService.start`` (``runs/service.py``), which makes them.

``runtime_of`` asks a host's registry for an agent and turns the agent's refusals into protocol
ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import Any, Protocol, cast

import ag_ui.core as agui
from ag_ui.core import BaseEvent

from ..agent.runtime import Runtime
from ..contract.errors import AgentError, RunBusyError
from ..contract.events import TextEvent
from ..contract.kernel import KernelAccess
from ..contract.run import RunEnd, StreamItem, ThreadState
from . import errors
from .dialect import Dialect, dialect_of, legacy_events
from .mapping import EventMapper
from .owners import Requester, admit_thread
from .plan import Decision, decide_plan, tag_run
from .request import RunRequest, read_request

__all__ = ["RuntimeSource", "ThreadRun", "runtime_of"]

log = logging.getLogger(__name__)


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


class ThreadRun:
    """One run of ``runtime`` on the thread ``request`` names (see the module docstring).

    ``kernel`` is where the run's kernel tools work; ``protocol`` (the command's
    ``agui.protocol``) forces a dialect or, ``auto``, lets the request's ``protocolVersion``
    tell it. With a ``requester`` (an HTTP host), the thread is the requester's own of that id
    (see ``owners.scoped_id``), checked before anything else.
    """

    def __init__(
        self,
        runtime: Runtime,
        request: RunRequest | agui.RunAgentInput,
        *,
        kernel: KernelAccess | None = None,
        protocol: str = "auto",
        requester: Requester | None = None,
    ) -> None:
        self.runtime = runtime
        self.request = request if isinstance(request, RunRequest) else read_request(request)
        #: The AG-UI dialect the client reads (see ``dialect.py``).
        self.dialect: Dialect = dialect_of(self.request.input, protocol)
        self._kernel = kernel
        self._requester = requester
        self._decision: Decision | None = None
        #: The run this one branched from (its ``parentRunId``; the thread's id for its start),
        #: once planned; ``None`` when it continues the thread's latest checkpoint.
        self.parent_run_id: str | None = None
        self._raw = False
        self._streamed = False
        self._steps = self._run()

    async def plan(self) -> Decision:
        """Claims the thread and decides the plan; raises the ``ProtocolError`` that refuses
        the run instead (and then holds nothing)."""
        await anext(self._steps)
        assert self._decision is not None
        return self._decision

    def events(self) -> AsyncGenerator[BaseEvent, None]:
        """The planned run's AG-UI events; always ends with RUN_FINISHED or RUN_ERROR unless
        cancelled. A 0.x client gets the few events its dialect shapes differently rewritten
        (``dialect.legacy_events``); token deltas never go that way."""
        return cast("AsyncGenerator[BaseEvent, None]", self._stream(raw=False))

    def items(self) -> AsyncGenerator[StreamItem | RunEnd, None]:
        """The planned run's stream items, then one ``RunEnd`` unless it raises (as
        ``Runtime.stream`` yields them)."""
        return cast("AsyncGenerator[StreamItem | RunEnd, None]", self._stream(raw=True))

    async def aclose(self) -> None:
        """Ends the run where it is: a run planned but never streamed lets its thread go. (A
        run streaming in another task at the time ends there, as that task ends.)"""
        if not getattr(self._steps, "ag_running", False):  # a native async generator's flag
            await self._steps.aclose()

    async def _branch(self, key: str, state: ThreadState) -> tuple[str, str] | None:
        """``(parentRunId, checkpoint)`` when the run starts from an earlier point than the
        thread's latest checkpoint: the ``parentRunId`` the client sent, or, for a new turn of
        a notebook cell whose earlier turn is on the thread's current branch, the point just
        before that turn (the cell runs again: its turn is replaced). Decided here, under the
        claim, so the cells above a re-run that ran since the page loaded are never dropped."""
        given, runtime = self.request.input, self.runtime
        parent = given.parent_run_id
        if parent:
            name = key if parent == given.thread_id else parent
            checkpoint = await runtime.branch_point(key, name)
            return None if checkpoint == state.checkpoint_id else (parent, checkpoint)
        cell = self.request.cell
        if not cell or given.resume or not given.messages or given.messages[-1].role != "user":
            return None
        earlier = [
            t.turn_id
            for t in state.turns()
            if t.cell_id == cell and t.turn_id and t.turn_id != self.request.turn
        ]
        if not earlier:
            return None
        first = next((r for r in await runtime.runs(key) if r.turn_id == earlier[-1]), None)
        if first is None:  # run before runs were recorded: appended as before
            return None
        parent = first.parent_run_id or given.thread_id
        name = key if parent == given.thread_id else parent
        return parent, await runtime.branch_point(key, name)

    def _stream(self, *, raw: bool) -> AsyncGenerator[Any, None]:
        if self._decision is None or self._streamed:
            raise RuntimeError("A run streams once, after it is planned.")
        self._streamed, self._raw = True, raw
        # The run's own steps, not a generator around them: nothing more per token.
        return self._steps

    async def _run(self) -> AsyncGenerator[Any, None]:
        """The run's steps: the claim, the plan, then (``None`` marks the plan) the stream."""
        runtime = self.runtime
        given = self.request.input
        # The thread's key in the store: the request's id, scoped by its user (see ``owners``).
        key = given.thread_id
        requester = self._requester
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
            try:
                state = await runtime.thread_state(key)
                branch = await self._branch(key, state)
                base = state
                if branch is not None:
                    base = await runtime.thread_state(key, branch[1])
                decision = decide_plan(
                    given,
                    base,
                    turn=self.request.turn,
                    thread_key=key,
                    kernel=self._kernel,
                    owner=requester.name if requester is not None else "",
                    cell=self.request.cell,
                    known=frozenset(state.message_ids) if branch is not None else frozenset(),
                )
            except AgentError as exc:
                raise errors.from_agent_error(exc) from None
            plan = decision.plan
            plan.run_id, plan.turn_id = given.run_id, self.request.turn or ""
            tag_run(plan, given.run_id)
            plan.cell_id = self.request.cell or ""
            if branch is not None:
                self.parent_run_id, plan.branch_from = branch
                plan.parent_run_id = "" if branch[0] == given.thread_id else branch[0]
            else:
                plan.parent_run_id = base.run_id
            self._decision = decision
            yield None  # planned; the stream starts when the host reads it
            if self._raw:
                async with contextlib.aclosing(runtime.stream(decision.plan)) as items:
                    async for item in items:
                        yield item
                return
            mapper = EventMapper(
                given.thread_id,
                given.run_id,
                decision.client_answered,
                self.parent_run_id,
                price=runtime.cost,
            )
            map_item = mapper.map
            adapt = legacy_events if self.dialect == "0.x" else None
            try:
                if adapt is None:
                    yield mapper.start()
                else:
                    for event in adapt(mapper.start()):
                        yield event
                text_delta = mapper.text_delta
                async with contextlib.aclosing(runtime.stream(decision.plan)) as items:
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
                log.exception("Run %s on thread %s failed", given.run_id, given.thread_id)
                for event in mapper.fail(exc):
                    if adapt is None:
                        yield event
                    else:
                        for out in adapt(event):
                            yield out
        finally:
            claim.release()  # however the run ended: the one place a run lets its thread go
