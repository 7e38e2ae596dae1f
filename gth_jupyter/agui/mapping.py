"""``AgentStreamEvent`` → AG-UI 1.0 events, for one run.

The rules the official client enforces shape this class: a text message is closed before any
tool call, reasoning or activity starts (the client finalises a message when a tool call starts
on it),
everything open is closed before ``RUN_FINISHED``, a suspended client tool call gets no
``TOOL_CALL_RESULT``, and a result the client sent itself is never echoed back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any
from uuid import uuid4

import ag_ui.core as agui
from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    BaseEvent,
    CustomEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ..contract import events as ev
from ..contract.events import with_delta
from ..contract.pending import CLIENT_TOOL_REASON, PendingInterrupt
from ..contract.run import AssistantMessageStart, RunEnd, StreamItem, ToolResultMessage
from ..contract.shared_state import StateDelta, StateSnapshot
from ..contract.surfaces import ActivityDelta, ActivitySnapshot
from ..contract.usage import ModelCall, UsageAccount

PROTOCOL_VERSION = "1.0"
TOOL_OUTPUT_EVENT = "gth.tool_output"


def error_code(exc: BaseException) -> str:
    """A stable snake_case code for a failure after the stream opened."""
    code = getattr(exc, "code", None)
    if isinstance(code, str) and code:
        return code
    name = type(exc).__name__
    if name == "GraphRecursionError":
        return "recursion_limit"
    if isinstance(exc, TimeoutError):
        return "timeout"
    return "agent_error"


def to_interrupt(pending: PendingInterrupt) -> agui.Interrupt:
    value = pending.value if isinstance(pending.value, dict) else {}
    if pending.client_tool:
        return agui.Interrupt(
            id=pending.id,
            reason=CLIENT_TOOL_REASON,
            message=f"Run the client tool {pending.tool_name}.",
            tool_call_id=pending.tool_call_id,
            metadata={"gth": {"clientTool": pending.tool_name, "args": value.get("args")}},
        )
    message = pending.value if isinstance(pending.value, str) else value.get("message")
    schema = value.get("responseSchema") or value.get("response_schema")
    expires = value.get("expiresAt") or value.get("expires_at")
    return agui.Interrupt(
        id=pending.id,
        reason=str(value.get("reason") or "langgraph:interrupt"),
        message=message if isinstance(message, str) else None,
        tool_call_id=pending.tool_call_id,
        response_schema=schema if isinstance(schema, dict) else None,
        expires_at=expires if isinstance(expires, str) else None,
        metadata={"gth": {"value": _jsonable(pending.value)}},
    )


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


class EventMapper:
    """Stateful mapping of one run's stream items to AG-UI events."""

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        client_answered: set[str] | None = None,
        parent_run_id: str | None = None,
        price: Callable[[UsageAccount], Any] | None = None,
    ):
        self.thread_id = thread_id
        self.run_id = run_id
        #: The run this one branched from, echoed in RUN_STARTED (AG-UI ``parentRunId``).
        self.parent_run_id = parent_run_id
        self._client_answered = client_answered or set()
        self._assistant_id: str | None = None
        self._text_runs = 0  # text runs seen in the current assistant message
        self._text_id: str | None = None
        self._text_template: TextMessageContentEvent | None = None
        self._reasoning_id: str | None = None
        self._open_calls: set[str] = set()
        self._result_message_id: str | None = None
        self.finished = False
        #: The run's model calls, summed (``RUN_FINISHED.usage`` / ``RUN_ERROR.usage``).
        self.usage = UsageAccount()
        self._price = price

    def start(self) -> RunStartedEvent:
        return RunStartedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            protocol_version=PROTOCOL_VERSION,
            parent_run_id=self.parent_run_id,
        )

    def text_delta(self, delta: str) -> TextMessageContentEvent | None:
        """The hot path: the next delta of the text message already open, else ``None``."""
        template = self._text_template
        return with_delta(template, delta) if template is not None else None

    def map(self, item: StreamItem) -> Iterator[BaseEvent]:
        if isinstance(item, ev.TextEvent):
            fast = self.text_delta(item.delta)
            if fast is not None:
                yield fast
                return
            yield from self._close_reasoning()
            start = self._open_text()
            yield start
            self._text_template = TextMessageContentEvent(
                message_id=start.message_id, delta=item.delta
            )
            yield self._text_template
        elif isinstance(item, AssistantMessageStart):
            yield from self._close_text()
            self._assistant_id = item.message_id
            self._text_runs = 0
        elif isinstance(item, ev.ToolStartEvent):
            yield from self._close_text()
            yield from self._close_reasoning()
            self._open_calls.add(item.id)
            yield ToolCallStartEvent(
                tool_call_id=item.id,
                tool_call_name=item.name,
                parent_message_id=self._assistant_id,
            )
        elif isinstance(item, ev.ToolArgsEvent):
            if item.id in self._open_calls:
                yield ToolCallArgsEvent(tool_call_id=item.id, delta=item.delta)
        elif isinstance(item, ev.ToolEndEvent):
            if item.id in self._open_calls:
                self._open_calls.discard(item.id)
                yield ToolCallEndEvent(tool_call_id=item.id)
        elif isinstance(item, ToolResultMessage):
            self._result_message_id = item.message_id
        elif isinstance(item, ev.ToolResultEvent):
            yield from self._close_text()
            message_id, self._result_message_id = self._result_message_id, None
            if item.id not in self._client_answered:
                yield ToolCallResultEvent(
                    message_id=message_id or f"{item.id}-result",
                    tool_call_id=item.id,
                    content=item.content,
                    role="tool",
                )
        elif isinstance(item, ev.ReasoningStartEvent):
            yield from self._close_text()
            if self._reasoning_id is None:
                self._reasoning_id = str(uuid4())
                yield ReasoningStartEvent(message_id=self._reasoning_id)
                yield ReasoningMessageStartEvent(message_id=self._reasoning_id, role="reasoning")
        elif isinstance(item, ev.ReasoningDeltaEvent):
            if self._reasoning_id is not None:
                yield ReasoningMessageContentEvent(message_id=self._reasoning_id, delta=item.delta)
        elif isinstance(item, ev.ReasoningEndEvent):
            yield from self._close_reasoning()
        elif isinstance(item, ev.ToolOutputEvent):
            # AG-UI has no event for live tool output: a CUSTOM event carries it, which any
            # client may ignore and the widget shows inside the tool's card.
            value: dict[str, Any] = {"chunk": item.chunk, "name": item.name}
            if item.id is not None:
                value["toolCallId"] = item.id
            if item.is_notice:
                value["isNotice"] = True
            yield CustomEvent(name=TOOL_OUTPUT_EVENT, value=value)
        elif isinstance(item, ModelCall):
            self.usage.add(item)
        elif isinstance(item, StateSnapshot):
            # The closing snapshot follows the end of the message it came after.
            yield from self._close_text()
            yield from self._close_reasoning()
            yield StateSnapshotEvent(snapshot=item.snapshot)
        elif isinstance(item, StateDelta):
            yield from self._close_text()
            yield StateDeltaEvent.model_validate({"delta": item.delta})
        elif isinstance(item, ActivitySnapshot):
            yield from self._close_text()
            yield ActivitySnapshotEvent(
                message_id=item.message_id, activity_type=item.activity_type, content=item.content
            )
        elif isinstance(item, ActivityDelta):
            yield from self._close_text()
            yield ActivityDeltaEvent.model_validate(
                {
                    "messageId": item.message_id,
                    "activityType": item.activity_type,
                    "patch": item.patch,
                }
            )

    def _open_text(self) -> TextMessageStartEvent:
        base = self._assistant_id or str(uuid4())
        self._text_runs += 1
        self._text_id = base if self._text_runs == 1 else f"{base}-{self._text_runs}"
        return TextMessageStartEvent(message_id=self._text_id, role="assistant")

    def _close_text(self) -> Iterator[BaseEvent]:
        if self._text_id is not None:
            yield TextMessageEndEvent(message_id=self._text_id)
            self._text_id = None
            self._text_template = None

    def _close_reasoning(self) -> Iterator[BaseEvent]:
        if self._reasoning_id is not None:
            yield ReasoningMessageEndEvent(message_id=self._reasoning_id)
            yield ReasoningEndEvent(message_id=self._reasoning_id)
            self._reasoning_id = None

    def close_all(self) -> Iterator[BaseEvent]:
        yield from self._close_text()
        yield from self._close_reasoning()
        for call_id in sorted(self._open_calls):
            yield ToolCallEndEvent(tool_call_id=call_id)
        self._open_calls.clear()

    def finish(self, end: RunEnd) -> Iterator[BaseEvent]:
        yield from self.close_all()
        self.finished = True
        outcome: Any
        if any(not p.client_tool for p in end.pending):
            outcome = agui.RunFinishedInterruptOutcome(
                interrupts=[to_interrupt(p) for p in end.pending]
            )
        else:
            calls = [p.tool_call_id for p in end.pending if p.tool_call_id]
            outcome = agui.RunFinishedSuccessOutcome(pending_tool_call_ids=calls or None)
        usage, metadata = self._usage()
        yield RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            outcome=outcome,
            usage=usage,
            metadata=metadata,
        )

    def fail(self, exc: BaseException) -> Iterator[BaseEvent]:
        yield from self.close_all()
        self.finished = True
        message = str(exc) or type(exc).__name__
        usage, metadata = self._usage()
        yield RunErrorEvent(message=message, code=error_code(exc), usage=usage, metadata=metadata)

    def _usage(self) -> tuple[list[agui.TokenUsage] | None, dict[str, Any] | None]:
        """The run's ``usage`` and ``metadata.gth.cost`` (both ``None`` when no model call
        reported usage)."""
        if not self.usage:
            return None, None
        entries = [agui.TokenUsage.model_validate(e) for e in self.usage.entries()]
        cost = self._price(self.usage) if self._price is not None else None
        return entries, ({"gth": {"cost": cost}} if cost is not None else None)
