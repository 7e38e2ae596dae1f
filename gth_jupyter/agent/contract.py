"""The run contract: everything the protocol layer and the hosts read of a run, LangGraph-free.

A host describes a run as a :class:`RunPlan` (new messages, or answers to what the thread waits
on), reads :data:`StreamItem` values followed by one :class:`RunEnd`, and inspects a thread as a
:class:`ThreadState`. Failures an agent raises before a run starts are :class:`AgentError`
subclasses with a stable ``code``; the AG-UI layer maps them to HTTP refusals.

The resume codec (how an answer to a suspended call is encoded and read back) lives in
``resume.py``, the errors in ``errors.py``, the shared state in ``shared_state.py`` and A2UI
surfaces as activity in ``surfaces.py``; this module re-exports them, so the protocol layer reads
one module of the agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from .errors import (
    AgentError,
    AgentNotFoundError,
    AgentUnavailableError,
    InterruptMismatchError,
    InterruptPendingError,
    NoPendingInterruptError,
    RunBusyError,
    describe_pending,
)
from .events import (
    AgentStreamEvent,
    ReasoningDeltaEvent,
    ReasoningEndEvent,
    ReasoningStartEvent,
    TextEvent,
    ToolArgsEvent,
    ToolEndEvent,
    ToolOutputEvent,
    ToolResultEvent,
    ToolStartEvent,
)
from .names import DEFAULT_AGENT
from .resume import (
    APPROVAL_INTERRUPT,
    APPROVAL_RESPONSE_SCHEMA,
    CLIENT_TOOL_INTERRUPT,
    ApprovalAnswer,
    ClientToolAnswer,
    PendingInterrupt,
    Resume,
    ToolResult,
    forwarded_command,
    resume_from_command,
    resume_from_entries,
    resume_from_tool_results,
)
from .shared_state import (
    REPLACE_STATE,
    STATE_KEY,
    StateDelta,
    StateSnapshot,
    json_patch,
    merge_state,
)
from .surfaces import (
    A2UI_ACTIVITY,
    SURFACE_TOOL,
    ActivityDelta,
    ActivitySnapshot,
    SurfaceTracker,
    surface_operations,
    thread_activities,
)

__all__ = [
    "A2UI_ACTIVITY",
    "APPROVAL_INTERRUPT",
    "APPROVAL_RESPONSE_SCHEMA",
    "CLIENT_TOOL_INTERRUPT",
    "DEFAULT_AGENT",
    "EMPTY_SCHEMA",
    "IMAGES_FOR",
    "INJECTED_MARK",
    "OWNER_KEY",
    "PHOTO_PLACEHOLDER",
    "REPLACE_STATE",
    "STATE_KEY",
    "SURFACE_TOOL",
    "TURN_KEY",
    "ActivityDelta",
    "ActivitySnapshot",
    "AgentError",
    "AgentNotFoundError",
    "AgentStreamEvent",
    "AgentUnavailableError",
    "ApprovalAnswer",
    "AssistantMessageStart",
    "ClientToolAnswer",
    "ClientToolSpec",
    "InterruptMismatchError",
    "InterruptPendingError",
    "KernelAccess",
    "NoPendingInterruptError",
    "PendingInterrupt",
    "ReasoningDeltaEvent",
    "ReasoningEndEvent",
    "ReasoningStartEvent",
    "Resume",
    "RunBusyError",
    "RunContext",
    "RunEnd",
    "RunPlan",
    "StateDelta",
    "StateSnapshot",
    "StreamItem",
    "SurfaceTracker",
    "TextEvent",
    "ThreadState",
    "ToolArgsEvent",
    "ToolEndEvent",
    "ToolOutputEvent",
    "ToolResult",
    "ToolResultEvent",
    "ToolResultMessage",
    "ToolStartEvent",
    "Turn",
    "describe_pending",
    "forwarded_command",
    "json_patch",
    "merge_state",
    "public_message_id",
    "resume_from_command",
    "resume_from_entries",
    "resume_from_tool_results",
    "starts_turn",
    "surface_operations",
    "thread_activities",
    "tool_content_text",
]

#: ``additional_kwargs`` key of messages middleware added for the model only (a captured frame).
INJECTED_MARK = "gth_image_injected"
#: ``additional_kwargs`` key of an injected message holding a tool's images: that tool call's id
#: (so a transcript can show the images in the tool's card, where the result no longer has them).
IMAGES_FOR = "gth_images_for"
#: How the result of a photo moved out for the model (``frontend-image-injection``) begins, so a
#: transcript can tell it and put the photo back into the ``capture_image`` card.
PHOTO_PLACEHOLDER = "[image captured: "
#: ``configurable`` key of a run's config naming the user it runs for (the thread's owner), so
#: middleware can scope what a user granted to that user.
OWNER_KEY = "gth_owner"
#: ``additional_kwargs`` key naming the turn a user message starts: the widget (a ``%gth``
#: cell) that sent it. Everything after it, up to the next user message, belongs to that turn.
TURN_KEY = "gth_turn"

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


_RUN_ID_PREFIX = "lc_run--"


def public_message_id(message_id: str | None) -> str | None:
    """LangChain's generated ``lc_run--<uuid>`` ids, shortened to the uuid for the wire."""
    if message_id and message_id.startswith(_RUN_ID_PREFIX):
        return message_id[len(_RUN_ID_PREFIX) :]
    return message_id


def tool_content_text(content: Any) -> str:
    """A tool result's content as the text a client shows."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return "".join(str(b.get("text", "")) for b in content)
    return json.dumps(content, ensure_ascii=False, default=str)


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


#: What a run streams: the renderer contract, two markers carrying checkpoint ids, and the
#: shared state and activity items.
StreamItem = (
    AgentStreamEvent
    | AssistantMessageStart
    | ToolResultMessage
    | StateSnapshot
    | StateDelta
    | ActivitySnapshot
    | ActivityDelta
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
                current = Turn(tag if isinstance(tag, str) else None, [])
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


def starts_turn(message: BaseMessage) -> bool:
    """A user message the person sent (not one middleware added for the model)."""
    return message.type == "human" and not message.additional_kwargs.get(INJECTED_MARK)


class KernelAccess(Protocol):
    """A live notebook kernel as the kernel tools see it; each host provides its own.

    Answers are JSON-able dicts; a failure is ``{"error": code, "message": text}``, never a
    raise. ``where`` says where introspection ran (``subshell``, ``main`` or ``in-kernel``)."""

    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]: ...

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]: ...

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]: ...


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
    ``kernel``: the notebook kernel the kernel tools work in (``None``: no kernel here)."""

    context: list[tuple[str, str]] = field(default_factory=list)
    queued_messages: list[BaseMessage] = field(default_factory=list)
    answering: frozenset[str] = frozenset()
    kernel: KernelAccess | None = None
