"""The agent runtime: one configured agent, its threads, and the runs on them.

A ``Runtime`` owns the graph cache and talks to the shared checkpointer. It knows LangGraph,
not HTTP: callers describe a run as a ``RunPlan`` (new messages, or answers to pending
interrupts) and read ``StreamItem``s followed by one ``RunEnd``. Only one run per thread may be
in flight; ``claim`` refuses a second one at once rather than queueing it: first against the
runs of this process (a set shared by the runtimes of one store), then against every process
sharing the store, through the store's run leases
(:class:`~gth_jupyter.store.RunLeases`).

Branches: every checkpoint a run writes carries its run id (``RUN_META_KEY``), and the store's
thread index records each run with the run it started from. A run may start from where an
earlier run ended (``RunPlan.branch_from``, found by :meth:`Runtime.branch_point`) instead of
from the thread's latest checkpoint: LangGraph forks there, the fork's checkpoints become the
thread's latest (its current branch), and the earlier branch stays in the checkpoints.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Interrupt

from ..contract.errors import ParentRunNotFoundError, RunBusyError
from ..contract.events import ToolResultEvent
from ..contract.names import OWNER_KEY, RUN_META_KEY
from ..contract.pending import PendingInterrupt
from ..contract.run import (
    ClientToolSpec,
    RunContext,
    RunEnd,
    RunPlan,
    StreamItem,
    ThreadState,
    ToolResultMessage,
)
from ..contract.shared_state import REPLACE_STATE, STATE_KEY
from ..contract.usage import UsageAccount
from ..store.base import RunLease, RunLeases, RunRecord, ThreadIndex
from ..store.local import LocalLeases, MemoryThreads, utc_now
from .graph import AgentGraph, GraphCache, ToolLike, tool_like_name
from .pricing import Pricer, cost_json
from .stream import StreamTranslator

log = logging.getLogger(__name__)

__all__ = ["STREAM_MODES", "Runtime", "ThreadClaim", "pending_of"]

StreamMode = Literal["messages", "updates", "custom"]
STREAM_MODES: list[StreamMode] = ["messages", "updates", "custom"]


def pending_of(item: Interrupt) -> PendingInterrupt:
    """A LangGraph interrupt as the contract's ``PendingInterrupt``."""
    return PendingInterrupt.of(item.id, item.value)


@dataclass(eq=False)
class ThreadClaim:
    """Held while a run uses its thread (in this process's claims, by thread; the lease holds
    it in the shared store too); ``release`` is idempotent."""

    _busy: dict[str, str] = field(repr=False)
    thread_id: str
    _lease: RunLease | None = field(default=None, repr=False)
    run_id: str = ""
    _held: bool = field(default=True, init=False, repr=False)

    def release(self) -> None:
        if self._held:
            self._held = False
            self._busy.pop(self.thread_id, None)
            if self._lease is not None:
                self._lease.release()


class Runtime:
    """A configured agent: model, tools, middleware, and the checkpointer its threads live in."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[ToolLike] = (),
        *,
        checkpointer: BaseCheckpointSaver[Any],
        middleware: Sequence[AgentMiddleware] = (),
        system_prompt: str | None = None,
        recursion_limit: int = 1000,
        busy_threads: dict[str, str] | None = None,
        leases: RunLeases | None = None,
        threads: ThreadIndex | None = None,
        pricer: Pricer | None = None,
        model_name: tuple[str, str] = ("", ""),
    ) -> None:
        self.model = model
        #: What a run's tokens cost (see ``pricing.py``).
        self.pricer = pricer if pricer is not None else Pricer()
        #: ``(llm.type, model)`` as configured: what a reply that does not say was.
        self.model_name = model_name
        self.tools = list(tools)
        self.checkpointer = checkpointer
        self.recursion_limit = recursion_limit
        self._graphs = GraphCache(
            model,
            self.tools,
            middleware=middleware,
            system_prompt=system_prompt,
            checkpointer=checkpointer,
        )
        # Thread id -> run id, shared between runtimes that share a checkpointer, so a thread
        # is busy for all.
        self._busy = busy_threads if busy_threads is not None else {}
        # Other processes sharing the checkpointer; none for a checkpointer of this process.
        self._leases: RunLeases = leases if leases is not None else LocalLeases()
        #: Who owns each thread (see :class:`~gth_jupyter.store.ThreadIndex`).
        self.threads: ThreadIndex = threads if threads is not None else MemoryThreads()

    @property
    def tool_names(self) -> list[str]:
        return [name for name in map(tool_like_name, self.tools) if name]

    def graph(self, client_tools: Sequence[ClientToolSpec] = ()) -> AgentGraph:
        return self._graphs.get(client_tools)

    async def claim(self, thread_id: str, run_id: str = "") -> ThreadClaim:
        """The thread for run ``run_id``, or :class:`RunBusyError` when a run holds it here or
        in another process sharing the store."""
        if thread_id in self._busy:
            raise RunBusyError(thread_id)
        self._busy[thread_id] = run_id  # held while the lease is asked for, too
        try:
            lease = await self._leases.acquire(thread_id, run_id)
        except BaseException:
            self._busy.pop(thread_id, None)
            raise
        if lease is None:
            self._busy.pop(thread_id, None)
            raise RunBusyError(thread_id)
        return ThreadClaim(self._busy, thread_id, lease, run_id)

    def is_busy(self, thread_id: str) -> bool:
        """Whether a run of this process holds the thread."""
        return thread_id in self._busy

    async def running(self, thread_id: str) -> str | None:
        """The id of the run holding ``thread_id`` in any process sharing the store (``""``
        when its id is unknown), or ``None`` when the thread is free."""
        if thread_id in self._busy:
            return self._busy[thread_id]
        return await self._leases.holder(thread_id)

    def _config(
        self, thread_id: str, owner: str = "", checkpoint_id: str | None = None
    ) -> RunnableConfig:
        configurable: dict[str, Any] = {"thread_id": thread_id}
        if owner:
            configurable[OWNER_KEY] = owner
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        return {"configurable": configurable, "recursion_limit": self.recursion_limit}

    async def has_thread(self, thread_id: str) -> bool:
        """Whether the checkpointer holds anything of ``thread_id``."""
        return await self.checkpointer.aget_tuple(self._config(thread_id)) is not None

    async def thread_state(self, thread_id: str, checkpoint_id: str | None = None) -> ThreadState:
        """The thread at its latest checkpoint (its current branch), or at ``checkpoint_id``."""
        snapshot = await self.graph().aget_state(self._config(thread_id, "", checkpoint_id))
        values = snapshot.values if isinstance(snapshot.values, dict) else {}
        metadata = snapshot.metadata or {}
        configurable = (snapshot.config or {}).get("configurable", {})
        messages = list(values.get("messages", []))
        pending = [pending_of(i) for i in snapshot.interrupts]
        shared = values.get(STATE_KEY)
        return ThreadState(
            messages,
            pending,
            can_continue=bool(snapshot.next) and not pending,
            state=dict(shared) if isinstance(shared, dict) else {},
            run_id=str(metadata.get(RUN_META_KEY) or ""),
            checkpoint_id=str(configurable.get("checkpoint_id") or ""),
        )

    def cost(self, account: UsageAccount) -> dict[str, Any] | None:
        """What ``account``'s tokens cost, as ``{"usd", "source"}`` (``usd`` ``None``: a model
        with no known price); ``None`` for an empty account."""
        return cost_json(self.pricer.cost(account))

    async def run_end(self, thread_id: str, run_id: str) -> str | None:
        """The checkpoint run ``run_id`` ended on (the last it wrote), or ``None``."""
        config = self._config(thread_id)
        async for item in self.checkpointer.alist(config, filter={RUN_META_KEY: run_id}, limit=1):
            return str(item.config["configurable"]["checkpoint_id"])
        return None

    async def thread_start(self, thread_id: str) -> str | None:
        """The thread's first checkpoint (its first run's input, before any message), which a
        branch from the thread's start continues from; ``None`` for a thread with none."""
        first: str | None = None
        runs = await self.threads.runs(thread_id)
        roots = [r.run_id for r in runs if not r.parent_run_id]
        config = self._config(thread_id)
        if roots:  # the first run's input checkpoint: one row, not the whole thread
            found = self.checkpointer.alist(config, filter={RUN_META_KEY: roots[0], "step": -1})
            async for item in found:
                first = str(item.config["configurable"]["checkpoint_id"])
        if first is None:  # a thread from before runs were recorded
            async for item in self.checkpointer.alist(config):
                first = str(item.config["configurable"]["checkpoint_id"])
        return first

    async def branch_point(self, thread_id: str, parent_run_id: str) -> str:
        """The checkpoint a run with ``parentRunId`` continues from: where that run ended, or,
        for the thread's own id, the thread's start; :class:`ParentRunNotFoundError` for a run
        this thread has not (or one that ended before it wrote anything)."""
        found = await self.run_end(thread_id, parent_run_id)
        if found is None and parent_run_id == thread_id:
            found = await self.thread_start(thread_id)
        if found is None:
            raise ParentRunNotFoundError(thread_id, parent_run_id)
        return found

    async def runs(self, thread_id: str) -> list[RunRecord]:
        """The runs recorded on the thread, oldest first."""
        return list(await self.threads.runs(thread_id))

    async def stream(self, plan: RunPlan) -> AsyncGenerator[StreamItem | RunEnd, None]:
        """Runs the plan; yields stream items, then exactly one ``RunEnd`` unless it raises."""
        graph = self.graph(plan.client_tools)
        config = self._config(plan.thread_id, plan.owner, plan.branch_from)
        if plan.run_id:
            config["metadata"] = {RUN_META_KEY: plan.run_id}
            record = RunRecord(
                plan.run_id, plan.parent_run_id, plan.turn_id, plan.cell_id, utc_now()
            )
            await self.threads.add_run(plan.thread_id, record)
        if plan.abandon:
            closing = [_abandoned(p) for p in plan.abandon]
            updated = await graph.aupdate_state(config, {"messages": closing}, as_node="tools")
            _follow(config, updated)
            # The client still holds those calls open: tell it how they ended.
            for message in closing:
                yield ToolResultMessage(message.id or "", message.tool_call_id)
                yield ToolResultEvent(
                    id=message.tool_call_id, content=str(message.content), isError=True
                )
        # The client's state, when it sent one, replaces the thread's (see ``RunPlan.state``).
        sent = plan.state if isinstance(plan.state, dict) and plan.state else None
        update = {STATE_KEY: {REPLACE_STATE: sent}} if sent is not None else {}
        graph_input: Any
        answering: frozenset[str] = frozenset()
        if plan.resume is not None:
            graph_input = Command(resume=plan.resume.values, update=update or None)
            answering = plan.resume.tool_call_ids
        elif plan.messages:
            graph_input = {"messages": plan.messages, **update}
        elif plan.continue_run:
            graph_input = None
            if update:
                _follow(config, await graph.aupdate_state(config, update))
        else:
            yield RunEnd([])
            return
        # The thread before the run (as the host read it to plan, else read now): its state
        # (the start snapshot, and what state deltas are computed against) and its messages
        # (surfaces shown by earlier runs).
        before = plan.before or await self.thread_state(plan.thread_id, plan.branch_from)
        state = sent if sent is not None else (dict(before.state) if before.state else None)
        context = RunContext(list(plan.context), list(plan.queued), answering, plan.kernel)
        translator = StreamTranslator(
            state, before.messages, call_order(before.messages, answering), self.model_name
        )
        for item in translator.state_items():
            yield item
        feed, token = translator.feed, translator.token
        stream: Any = graph.astream(graph_input, config, stream_mode=STREAM_MODES, context=context)
        try:
            async with contextlib.aclosing(stream):
                async for mode, data in stream:
                    text = token(mode, data)  # nearly every chunk: no generator for it
                    if text is not None:
                        yield text
                        continue
                    for item in feed(mode, data):
                        yield item
        finally:  # what each call was sent, however the run ended (its answers are kept)
            if context.model_calls:
                await _keep_calls(self.threads, plan.thread_id, context.model_calls)
        for item in translator.release_held():
            yield item
        for item in translator.close_message():
            yield item
        for item in translator.state_items():
            yield item
        yield RunEnd([pending_of(i) for i in translator.interrupts])


async def _keep_calls(threads: ThreadIndex, thread_id: str, calls: dict[str, str]) -> None:
    """Stores the run's model-call records; a store that fails here loses only them."""
    try:  # shielded: a run cancelled now still keeps what its calls were sent
        await asyncio.shield(threads.add_model_calls(thread_id, dict(calls)))
    except Exception:
        log.warning("Could not keep what the model was sent on thread %s", thread_id, exc_info=True)


def _follow(config: RunnableConfig, updated: RunnableConfig) -> None:
    """A branch goes on from the checkpoint an update just wrote on it, not from its start."""
    configurable = config.get("configurable", {})
    if "checkpoint_id" in configurable:
        written = updated.get("configurable", {}).get("checkpoint_id")
        if written:
            configurable["checkpoint_id"] = written


def call_order(messages: Sequence[BaseMessage], ids: frozenset[str]) -> list[str]:
    """``ids`` in the order the thread's assistant messages made those calls."""
    if not ids:
        return []
    found = (
        call.get("id")
        for message in messages
        if isinstance(message, AIMessage)
        for call in message.tool_calls
    )
    return [call_id for call_id in found if call_id is not None and call_id in ids]


def _abandoned(pending: PendingInterrupt) -> ToolMessage:
    name = pending.tool_name or "tool"
    call_id = pending.tool_call_id or ""
    return ToolMessage(
        id=f"{call_id}-abandoned",
        content=f"The user did not answer the {name} call and sent a new message instead.",
        tool_call_id=call_id,
        name=name,
        status="error",
    )
