"""LangGraph stream → ``AgentStreamEvent``.

``graph.astream(stream_mode=["messages", "updates", "custom"])`` yields model chunks, finished
tool messages, node updates (where interrupts surface) and custom writes (live tool output).
``StreamTranslator`` turns them into the renderer contract, plus two small markers that carry ids
the contract leaves out but AG-UI needs: the id of the assistant message being streamed, and the
id of each tool result message. Keeping those ids equal to the checkpoint's lets a client's
history be matched against the thread on the next run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessageChunk, ToolMessage
from langgraph.types import Interrupt

from .contract import (
    AssistantMessageStart,
    ReasoningDeltaEvent,
    ReasoningEndEvent,
    ReasoningStartEvent,
    StreamItem,
    TextEvent,
    ToolArgsEvent,
    ToolEndEvent,
    ToolOutputEvent,
    ToolResultEvent,
    ToolResultMessage,
    ToolStartEvent,
    public_message_id,
    tool_content_text,
)


class StreamTranslator:
    """Stateful translation of one run's stream; one instance per run."""

    def __init__(self) -> None:
        self.interrupts: list[Interrupt] = []
        self._message_id: str | None = None
        self._reasoning_open = False
        # chunk index -> tool call id, for calls of the current message not yet ended
        self._open_calls: dict[int, str] = {}

    def feed(self, mode: str, data: Any) -> Iterator[StreamItem]:
        if mode == "messages":
            message = data[0]
            if isinstance(message, AIMessageChunk):
                yield from self._on_ai_chunk(message)
            elif isinstance(message, ToolMessage):
                yield from self.close_message()
                yield from self._on_tool_message(message)
        elif mode == "updates":
            if isinstance(data, dict):
                found = data.get("__interrupt__")
                if found:
                    self.interrupts.extend(found)
                # A node finished: whatever the model was streaming is complete.
                yield from self.close_message()
        elif mode == "custom":
            if isinstance(data, dict) and data.get("type") == "tool_output":
                yield ToolOutputEvent.model_validate(data)

    def _on_ai_chunk(self, chunk: AIMessageChunk) -> Iterator[StreamItem]:
        message_id = public_message_id(chunk.id)
        if message_id != self._message_id and message_id is not None:
            yield from self.close_message()
            self._message_id = message_id
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

    def _on_tool_message(self, message: ToolMessage) -> Iterator[StreamItem]:
        call_id = message.tool_call_id
        yield ToolResultMessage(message_id=message.id or f"{call_id}-result", tool_call_id=call_id)
        yield ToolResultEvent(
            id=call_id,
            content=tool_content_text(message.content),
            isError=True if message.status == "error" else None,
        )
