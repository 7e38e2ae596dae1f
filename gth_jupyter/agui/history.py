"""A thread as a client sees it: its checkpointed messages as AG-UI messages, and what it waits on.

Ids match the ones the stream used, so a client that merges history with live events sees one
message, not two. Messages the middleware injected for the model (a captured frame) are left
out: the transcript shows the tool call that produced them instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ..agent.contract import INJECTED_MARK, public_message_id, tool_content_text
from ..agent.runtime import Runtime
from .mapping import to_interrupt

__all__ = ["thread_view", "to_agui_messages"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(str(p) for p in parts)


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        # media blocks stay on the server: a transcript does not need the bytes
    return parts if parts else ""


def to_agui_messages(messages: Iterable[BaseMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.additional_kwargs.get(INJECTED_MARK) and isinstance(message, HumanMessage):
            continue
        mid = public_message_id(message.id) or ""
        if isinstance(message, HumanMessage):
            out.append({"id": mid, "role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AIMessage):
            item: dict[str, Any] = {"id": mid, "role": "assistant"}
            text = _text(message.content)
            if text:
                item["content"] = text
            if message.tool_calls:
                item["toolCalls"] = [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                    }
                    for call in message.tool_calls
                ]
            out.append(item)
        elif isinstance(message, ToolMessage):
            tool: dict[str, Any] = {
                "id": mid,
                "role": "tool",
                "toolCallId": message.tool_call_id,
                "content": tool_content_text(message.content),
            }
            if message.status == "error":
                tool["error"] = tool["content"]
            out.append(tool)
    return out


async def thread_view(runtime: Runtime, thread_id: str, turn: str | None = None) -> dict[str, Any]:
    """A thread as a client rebuilds it: its AG-UI messages, what it waits on, whether a run is
    in flight, and its turns. ``GET gth/threads/{id}`` and the comm's ``history`` answer this.

    With ``turn``, only that turn's messages (and the interrupts it waits on) are given: a
    ``%gth`` cell shows its own turn. ``turns`` lists every widget turn in order, each ``done``
    unless it is the thread's last turn and a run is in flight or an interrupt waits."""
    state = await runtime.thread_state(thread_id)
    busy = runtime.is_busy(thread_id)
    turns = state.turns()
    last = turns[-1] if turns else None
    messages = state.messages
    pending = state.pending
    if turn is not None:
        messages = [m for t in turns if t.turn_id == turn for m in t.messages]
        if last is None or last.turn_id != turn:
            pending = []
    return {
        "threadId": thread_id,
        "messages": to_agui_messages(messages),
        "pendingToolCallIds": [p.tool_call_id for p in pending if p.client_tool],
        "interrupts": [
            to_interrupt(p).model_dump(mode="json", by_alias=True, exclude_none=True)
            for p in pending
        ],
        "busy": busy,
        "turns": [
            {"turnId": t.turn_id, "done": t is not last or not (busy or state.pending)}
            for t in turns
            if t.turn_id is not None
        ],
    }
