"""The run contract: what a host asks of a run, what the run streams, and what a thread holds.

A host describes a run as a :class:`RunPlan` (new messages, or answers to what the thread waits
on), reads :data:`StreamItem` values followed by one :class:`RunEnd`, and inspects a thread as a
:class:`ThreadState`. The graph sees the per-run :class:`RunContext`. LangGraph-free: the resume
codec is ``resume.py``, the refusals ``errors.py``, the shared state ``shared_state.py``, A2UI
surfaces ``surfaces.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .events import AgentStreamEvent
from .kernel import KernelAccess
from .messages import starts_turn
from .names import CELL_KEY, RUN_META_KEY, TURN_KEY
from .pending import PendingInterrupt
from .resume import Resume
from .shared_state import StateDelta, StateSnapshot
from .surfaces import ActivityDelta, ActivitySnapshot
from .usage import ModelCall

__all__ = [
    "EMPTY_SCHEMA",
    "AssistantMessageStart",
    "ClientToolSpec",
    "RunContext",
    "RunEnd",
    "RunPlan",
    "StreamItem",
    "ThreadState",
    "ToolResultMessage",
    "Turn",
]

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


# -- stream items ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AssistantMessageStart:
    """The following text and tool calls belong to the assistant message ``message_id``."""

    message_id: str


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The next ``tool_result`` event is stored as the tool message ``message_id``."""

    message_id: str
    tool_call_id: str


#: What a run streams: the renderer contract, two markers carrying checkpoint ids, the
#: shared state and activity items, and each model call's usage.
StreamItem = (
    AgentStreamEvent
    | AssistantMessageStart
    | ToolResultMessage
    | StateSnapshot
    | StateDelta
    | ActivitySnapshot
    | ActivityDelta
    | ModelCall
)


# -- threads and plans ----------------------------------------------------------------------


@dataclass(frozen=True)
class ClientToolSpec:
    """A tool the client fulfils: what the model is told about it."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_SCHEMA))

    def signature(self) -> tuple[str, str]:
        """Identity for graph caching: descriptions do not change the graph."""
        return self.name, json.dumps(self.parameters, sort_keys=True, default=str)


@dataclass(frozen=True)
class ThreadState:
    """What a thread holds between runs."""

    messages: list[BaseMessage]
    pending: list[PendingInterrupt]
    can_continue: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    """The thread's shared (AG-UI) state."""
    run_id: str = ""
    """The run that wrote the checkpoint this state was read from (``""``: none recorded)."""
    checkpoint_id: str = ""
    """That checkpoint (``""``: the thread has none)."""

    @property
    def message_ids(self) -> set[str]:
        return {m.id for m in self.messages if m.id}

    def turns(self) -> list[Turn]:
        """The thread cut at each user message; messages before the first belong to none."""
        turns: list[Turn] = []
        current = Turn(None, [])
        for message in self.messages:
            if starts_turn(message):
                if current.messages:
                    turns.append(current)
                tag = message.additional_kwargs.get(TURN_KEY)
                cell = message.additional_kwargs.get(CELL_KEY)
                run = message.additional_kwargs.get(RUN_META_KEY)
                current = Turn(
                    tag if isinstance(tag, str) else None,
                    [],
                    cell if isinstance(cell, str) and cell else None,
                    run if isinstance(run, str) and run else None,
                )
            current.messages.append(message)
        if current.messages:
            turns.append(current)
        return turns

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


@dataclass(frozen=True)
class Turn:
    """One turn of a thread: the messages from a user message up to the next one."""

    turn_id: str | None
    messages: list[BaseMessage]
    #: The notebook cell it ran for, when its client said (``forwardedProps.gth.cellId``).
    cell_id: str | None = None
    #: The run that started it (what names a turn whose client sent no turn id).
    run_id: str | None = None


@dataclass
class RunPlan:
    """What one run does. Exactly one of ``messages`` / ``resume`` drives it."""

    thread_id: str
    messages: list[BaseMessage] = field(default_factory=list)
    resume: Resume | None = None
    abandon: list[PendingInterrupt] = field(default_factory=list)
    queued: list[BaseMessage] = field(default_factory=list)
    client_tools: list[ClientToolSpec] = field(default_factory=list)
    context: list[tuple[str, str]] = field(default_factory=list)
    continue_run: bool = False
    kernel: KernelAccess | None = None
    #: The user the run is for (its thread's owner), when a host knows it.
    owner: str = ""
    """The notebook kernel the kernel tools work in on this run, when the host has one."""
    state: dict[str, Any] | None = None
    """The client's shared state (AG-UI ``RunAgentInput.state``). A non-empty object replaces
    the thread's state at the start of the run (the client's copy is authoritative then); empty
    or ``None`` keeps the thread's state, so a client that does not use state never wipes it."""
    before: ThreadState | None = None
    """The thread as the host read it to plan this run, so the run need not read it again."""
    run_id: str = ""
    """The run's id (AG-UI ``runId``): its checkpoints carry it, and the thread's index of runs
    records it."""
    parent_run_id: str = ""
    """The run whose end this run starts from (``""``: the thread's start, or none recorded)."""
    branch_from: str | None = None
    """The checkpoint to continue from instead of the thread's latest (a branch), if any."""
    turn_id: str = ""
    cell_id: str = ""


@dataclass(frozen=True)
class RunEnd:
    """The last item of every run: the interrupts it stopped on, if any."""

    pending: list[PendingInterrupt]


@dataclass
class RunContext:
    """Per-run state handed to the graph as LangGraph's runtime ``context``.

    ``context``: the client's ambient facts for this run's system prompt; ``queued_messages``:
    user text typed while a tool call was suspended, added before the next model call;
    ``answering``: tool call ids whose suspended call this run resumes with an answer;
    ``kernel``: the notebook kernel the kernel tools work in (``None``: no kernel here);
    ``model_calls``: what each model call of the run was sent (a JSON record), by the id of the
    assistant message it answered with, kept by the run when it ends."""

    context: list[tuple[str, str]] = field(default_factory=list)
    queued_messages: list[BaseMessage] = field(default_factory=list)
    answering: frozenset[str] = frozenset()
    kernel: KernelAccess | None = None
    model_calls: dict[str, str] = field(default_factory=dict)
