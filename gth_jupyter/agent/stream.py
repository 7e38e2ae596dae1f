"""LangGraph stream → ``AgentStreamEvent``.

``graph.astream(stream_mode=["messages", "updates", "custom"])`` yields model chunks, finished
tool messages, node updates (where interrupts surface) and custom writes (live tool output).
``StreamTranslator`` turns them into the renderer contract, plus two small markers that carry ids
the contract leaves out but AG-UI needs: the id of the assistant message being streamed, and the
id of each tool result message. Keeping those ids equal to the checkpoint's lets a client's
history be matched against the thread on the next run.

It also follows the shared state: a node update that writes the state channel gives a
``StateDelta`` (JSON Patch against the state before it), and ``state_items`` the snapshots that
open and close a run using state. A ``show_a2ui_surface`` result gives an ``ActivitySnapshot``
for a surface first shown, an ``ActivityDelta`` for one shown before (in this run or, from
``history``, an earlier one). None of this touches the per-token path: a chunk that is only
the next text of the message being streamed takes :meth:`StreamTranslator.token` instead of
``feed``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage
from langgraph.types import Interrupt

from ..contract.events import (
    ReasoningDeltaEvent,
    ReasoningEndEvent,
    ReasoningStartEvent,
    TextEvent,
    ToolArgsEvent,
    ToolEndEvent,
    ToolOutputEvent,
    ToolResultEvent,
    ToolStartEvent,
    with_delta,
)
from ..contract.messages import public_message_id, tool_content_text
from ..contract.run import AssistantMessageStart, StreamItem, ToolResultMessage
from ..contract.shared_state import STATE_KEY, StateDelta, StateSnapshot, json_patch, merge_state
from ..contract.surfaces import SURFACE_TOOL, SurfaceTracker
from ..contract.usage import model_call_of

# Copied, with its delta replaced, for every plain text token (see ``token``).
_TEXT = TextEvent(delta="")


class StreamTranslator:
    """Stateful translation of one run's stream; one instance per run."""

    def __init__(
        self,
        state: dict[str, Any] | None = None,
        history: Sequence[BaseMessage] = (),
        answering: Sequence[str] = (),
        model: tuple[str, str] = ("", ""),
    ) -> None:
        self.interrupts: list[Interrupt] = []
        self._message_id: str | None = None
        # The id of the message being streamed as its chunks carry it (before public_message_id)
        self._chunk_id: str | None = None
        self._reasoning_open = False
        # chunk index -> tool call id, for calls of the current message not yet ended
        self._open_calls: dict[int, str] = {}
        # The shared state as the client last saw it; None while the run has not used state.
        self.state = state
        self.state_used = state is not None
        self._history = history
        self._surfaces: SurfaceTracker | None = None
        # The calls this run resumes, in their message's order: their results finish in
        # whatever order their tasks end, and go out in this one (the thread's), see ``_held``.
        self._answer_order = list(answering)
        self._held: dict[str, ToolMessage] = {}
        # Assistant messages whose usage was reported (a node may hand one on again).
        self._counted: set[str] = set()
        # (provider, model) as configured, for the usage of replies that do not name them.
        self._model = model

    def state_items(self) -> Iterator[StreamItem]:
        """A ``StateSnapshot`` of the current state, when this run uses state."""
        if self.state_used:
            yield StateSnapshot(dict(self.state or {}))

    def token(self, mode: str, data: Any) -> TextEvent | None:
        """The hot path: the ``TextEvent`` of a chunk that is nothing but the next text of the
        message being streamed (nearly every chunk of a long answer); ``None`` for any other
        item, which ``feed`` then translates. What it answers is what ``feed`` would yield."""
        if mode != "messages" or self._reasoning_open:
            return None
        chunk = data[0]
        if type(chunk) is not AIMessageChunk:
            return None
        content = chunk.content
        if (
            type(content) is str
            and content
            and chunk.id == self._chunk_id
            and self._chunk_id is not None
            and not chunk.additional_kwargs
            and not chunk.tool_call_chunks
            and chunk.chunk_position is None
        ):
            return with_delta(_TEXT, content)
        return None

    def feed(self, mode: str, data: Any) -> Iterator[StreamItem]:
        if mode == "messages":
            message = data[0]
            if isinstance(message, AIMessageChunk):
                yield from self._on_ai_chunk(message)
            elif isinstance(message, ToolMessage):
                yield from self.close_message()
                if message.tool_call_id in self._answer_order:
                    self._held[message.tool_call_id] = message
                    yield from self._release(final=False)
                else:
                    yield from self._on_tool_message(message)
        elif mode == "updates":
            if isinstance(data, dict):
                found = data.get("__interrupt__")
                if found:
                    self.interrupts.extend(found)
                # A node finished: whatever the model was streaming is complete.
                yield from self.close_message()
                for update in data.values():
                    yield from self._on_update(update)
        elif mode == "custom":
            if isinstance(data, dict) and data.get("type") == "tool_output":
                yield ToolOutputEvent.model_validate(data)

    def _on_ai_chunk(self, chunk: AIMessageChunk) -> Iterator[StreamItem]:
        message_id = public_message_id(chunk.id)
        if message_id != self._message_id and message_id is not None:
            yield from self.close_message()
            self._message_id = message_id
            self._chunk_id = chunk.id
            yield AssistantMessageStart(message_id)
        content = chunk.content
        # Fast path: a plain text token, which is nearly every chunk of a long answer.
        if isinstance(content, str) and not chunk.additional_kwargs:
            if content:
                if self._reasoning_open:
                    self._reasoning_open = False
                    yield ReasoningEndEvent()
                yield TextEvent(delta=content)
        else:
            yield from self._on_blocks(chunk)
        if chunk.tool_call_chunks:
            yield from self._on_tool_call_chunks(chunk)
        if chunk.chunk_position == "last":
            yield from self.close_message()

    def _on_blocks(self, chunk: AIMessageChunk) -> Iterator[StreamItem]:
        for block in chunk.content_blocks:
            kind = block.get("type")
            if kind == "reasoning":
                delta = str(block.get("reasoning") or "")
                if not delta:
                    continue
                if not self._reasoning_open:
                    self._reasoning_open = True
                    yield ReasoningStartEvent()
                yield ReasoningDeltaEvent(delta=delta)
            elif kind == "text":
                text = str(block.get("text") or "")
                if text:
                    if self._reasoning_open:
                        self._reasoning_open = False
                        yield ReasoningEndEvent()
                    yield TextEvent(delta=text)

    def _on_tool_call_chunks(self, chunk: AIMessageChunk) -> Iterator[StreamItem]:
        if self._reasoning_open:
            self._reasoning_open = False
            yield ReasoningEndEvent()
        for part in chunk.tool_call_chunks:
            index = part.get("index")
            key = index if index is not None else -1
            call_id = self._open_calls.get(key)
            new_id = part.get("id")
            if new_id and new_id != call_id:
                if call_id is not None:
                    del self._open_calls[key]
                    yield ToolEndEvent(id=call_id)
                call_id = new_id
                self._open_calls[key] = call_id
                yield ToolStartEvent(id=call_id, name=part.get("name") or "")
            if call_id is None:
                continue  # arguments for a call whose start we never saw
            args = part.get("args")
            if args:
                yield ToolArgsEvent(id=call_id, delta=args)

    def close_message(self) -> Iterator[StreamItem]:
        """Ends reasoning and tool calls of the message being streamed, if any."""
        if self._reasoning_open:
            self._reasoning_open = False
            yield ReasoningEndEvent()
        if self._open_calls:
            for call_id in self._open_calls.values():
                yield ToolEndEvent(id=call_id)
            self._open_calls.clear()
        self._message_id = None
        self._chunk_id = None

    def release_held(self) -> Iterator[StreamItem]:
        """The results of resumed calls still held back (one of them never came), in order."""
        yield from self._release(final=True)

    def _release(self, *, final: bool) -> Iterator[StreamItem]:
        """Resumed calls' results, in their calls' order, as far as they have come (all of
        them when ``final``): two client tools answered at once end in either order, and a
        client builds its messages in the order the results arrive."""
        order, held = self._answer_order, self._held
        while order and (order[0] in held or final):
            message = held.pop(order.pop(0), None)
            if message is not None:
                yield from self._on_tool_message(message)

    def _on_update(self, update: Any) -> Iterator[StreamItem]:
        """State changes in one node's update (a dict, or a list of them from parallel tools),
        and the usage of the model call that wrote an assistant message (once per message)."""
        for part in update if isinstance(update, (list, tuple)) else (update,):
            messages = part.get("messages") if isinstance(part, dict) else None
            if isinstance(messages, list):
                for message in messages:
                    call = model_call_of(message, *self._model)
                    if call is not None and call.message_id not in self._counted:
                        self._counted.add(call.message_id)
                        yield call
            if isinstance(part, dict) and STATE_KEY in part:
                old = self.state or {}
                new = merge_state(old, part[STATE_KEY])
                self.state_used = True
                self.state = new
                delta = json_patch(old, new)
                if delta:
                    yield StateDelta(delta)

    def _on_tool_message(self, message: ToolMessage) -> Iterator[StreamItem]:
        call_id = message.tool_call_id
        yield ToolResultMessage(message_id=message.id or f"{call_id}-result", tool_call_id=call_id)
        yield ToolResultEvent(
            id=call_id,
            content=tool_content_text(message.content),
            isError=True if message.status == "error" else None,
        )
        if message.name == SURFACE_TOOL:
            if self._surfaces is None:
                self._surfaces = SurfaceTracker()
                for earlier in self._history:
                    self._surfaces.show_message(earlier)
            yield from self._surfaces.show_message(message)
