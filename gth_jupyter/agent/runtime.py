"""The agent runtime: one configured agent, its threads, and the runs on them.

A ``Runtime`` owns the graph cache and talks to the shared checkpointer. It knows LangGraph,
not HTTP: callers describe a run as a ``RunPlan`` (new messages, or answers to pending
interrupts) and read ``StreamItem``s followed by one ``RunEnd``. Only one run per thread may be
in flight; ``claim`` refuses a second one at once rather than queueing it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Interrupt

from .client_tools import CLIENT_TOOL_INTERRUPT, ClientToolSpec
from .events import ToolResultEvent
from .graph import AgentGraph, GraphCache, ToolLike, tool_like_name
from .run_context import RunContext
from .stream import StreamItem, StreamTranslator, ToolResultMessage

StreamMode = Literal["messages", "updates", "custom"]
STREAM_MODES: list[StreamMode] = ["messages", "updates", "custom"]


class RunBusyError(Exception):
    """A run is already in flight on this thread."""

    code = "run_busy"

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"A run is already in progress on thread '{thread_id}'.")
        self.thread_id = thread_id


@dataclass(frozen=True)
class PendingInterrupt:
    """An interrupt the thread is suspended on."""

    id: str
    value: Any
    tool_call_id: str | None = None
    tool_name: str | None = None
    client_tool: bool = False

    @classmethod
    def from_langgraph(cls, item: Interrupt) -> PendingInterrupt:
        value = item.value
        if isinstance(value, dict) and value.get("type") == CLIENT_TOOL_INTERRUPT:
            return cls(item.id, value, value.get("toolCallId"), value.get("name"), True)
        call_id = None
        if isinstance(value, dict):
            raw = value.get("toolCallId") or value.get("tool_call_id")
            call_id = raw if isinstance(raw, str) else None
        return cls(item.id, value, call_id)


@dataclass(frozen=True)
class ThreadState:
    """What a thread holds between runs."""

    messages: list[BaseMessage]
    pending: list[PendingInterrupt]
    can_continue: bool = False

    @property
    def message_ids(self) -> set[str]:
        return {m.id for m in self.messages if m.id}

    def answered_call_ids(self) -> set[str]:
        return {m.tool_call_id for m in self.messages if isinstance(m, ToolMessage)}

    def dangling_calls(self) -> list[dict[str, Any]]:
        """Tool calls with no result and no pending interrupt (a run cancelled mid-tool)."""
        answered = self.answered_call_ids()
        pending = {p.tool_call_id for p in self.pending}
        calls: list[dict[str, Any]] = []
        for message in self.messages:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    if call["id"] and call["id"] not in answered and call["id"] not in pending:
                        calls.append(dict(call))
        return calls


@dataclass
class RunPlan:
    """What one run does. Exactly one of ``messages`` / ``resume`` drives it."""

    thread_id: str
    messages: list[BaseMessage] = field(default_factory=list)
    resume: dict[str, Any] | None = None
    abandon: list[PendingInterrupt] = field(default_factory=list)
    queued: list[BaseMessage] = field(default_factory=list)
    client_tools: list[ClientToolSpec] = field(default_factory=list)
    context: list[tuple[str, str]] = field(default_factory=list)
    continue_run: bool = False


@dataclass(frozen=True)
class RunEnd:
    """The last item of every run: the interrupts it stopped on, if any."""

    pending: list[PendingInterrupt]


class ThreadClaim:
    """Held while a run uses its thread; ``release`` is idempotent."""

    def __init__(self, busy: set[str], thread_id: str) -> None:
        self._busy = busy
        self.thread_id = thread_id
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._busy.discard(self.thread_id)


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
        busy_threads: set[str] | None = None,
    ) -> None:
        self.model = model
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
        # Shared between runtimes that share a checkpointer, so a thread is busy for all.
        self._busy = busy_threads if busy_threads is not None else set()

    @property
    def tool_names(self) -> list[str]:
        return [name for name in map(tool_like_name, self.tools) if name]

    def graph(self, client_tools: Sequence[ClientToolSpec] = ()) -> AgentGraph:
        return self._graphs.get(client_tools)

    def claim(self, thread_id: str) -> ThreadClaim:
        if thread_id in self._busy:
            raise RunBusyError(thread_id)
        self._busy.add(thread_id)
        return ThreadClaim(self._busy, thread_id)

    def is_busy(self, thread_id: str) -> bool:
        return thread_id in self._busy

    def _config(self, thread_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread_id}, "recursion_limit": self.recursion_limit}

    async def thread_state(self, thread_id: str) -> ThreadState:
        snapshot = await self.graph().aget_state(self._config(thread_id))
        values = snapshot.values if isinstance(snapshot.values, dict) else {}
        messages = list(values.get("messages", []))
        pending = [PendingInterrupt.from_langgraph(i) for i in snapshot.interrupts]
        return ThreadState(messages, pending, can_continue=bool(snapshot.next) and not pending)

    async def stream(self, plan: RunPlan) -> AsyncGenerator[StreamItem | RunEnd, None]:
        """Runs the plan; yields stream items, then exactly one ``RunEnd`` unless it raises."""
        graph = self.graph(plan.client_tools)
        config = self._config(plan.thread_id)
        if plan.abandon:
            closing = [_abandoned(p) for p in plan.abandon]
            await graph.aupdate_state(config, {"messages": closing}, as_node="tools")
            # The client still holds those calls open: tell it how they ended.
            for message in closing:
                yield ToolResultMessage(message.id or "", message.tool_call_id)
                yield ToolResultEvent(
                    id=message.tool_call_id, content=str(message.content), isError=True
                )
        graph_input: Any
        if plan.resume is not None:
            graph_input = Command(resume=plan.resume)
        elif plan.messages:
            graph_input = {"messages": plan.messages}
        elif plan.continue_run:
            graph_input = None
        else:
            yield RunEnd([])
            return
        context = RunContext(context=list(plan.context), queued_messages=list(plan.queued))
        translator = StreamTranslator()
        feed = translator.feed
        stream: Any = graph.astream(graph_input, config, stream_mode=STREAM_MODES, context=context)
        async with contextlib.aclosing(stream):
            async for mode, data in stream:
                for item in feed(mode, data):
                    yield item
        for item in translator.close_message():
            yield item
        yield RunEnd([PendingInterrupt.from_langgraph(i) for i in translator.interrupts])


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
