"""AG-UI messages → LangChain messages, tolerant of what real clients send.

History repairs follow Gaunt Sloth's: tool-call arguments that are not valid JSON fall back to
the first complete JSON value or ``{}``; a tool message that answers no earlier call is dropped;
and a call left without an answer gets an error result, because providers reject a dangling
tool call on every later turn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import ag_ui.core as agui
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from ..contract.undo import UNDO_KEY, split_undo

log = logging.getLogger(__name__)


def parse_arguments(text: str | None) -> dict[str, Any]:
    """Tool-call arguments: empty → ``{}``; ``{}{}`` → the first object; garbage → ``{}``."""
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value, _ = json.JSONDecoder().raw_decode(text.strip())
        except json.JSONDecodeError:
            log.warning("Ignoring unparseable tool-call arguments: %.80s", text)
            return {}
    return value if isinstance(value, dict) else {}


def _part_to_block(part: Any) -> dict[str, Any] | None:
    kind = getattr(part, "type", None)
    if kind == "text":
        return {"type": "text", "text": part.text}
    source = getattr(part, "source", None)
    if kind not in ("image", "audio", "video", "document") or source is None:
        return None  # a part we cannot use is skipped, as the spec asks
    block_type = "file" if kind == "document" else kind
    mime = getattr(source, "mime_type", None)
    if source.type == "data":
        block: dict[str, Any] = {"type": block_type, "base64": source.value}
    elif source.type == "url":
        block = {"type": block_type, "url": source.value}
    else:
        return None  # opaque provider file handles are never fetched or parsed
    if mime:
        block["mime_type"] = mime
    return block


def user_content(content: Any) -> str | list[str | dict[str, Any]]:
    if isinstance(content, str):
        return content
    blocks = [b for b in (_part_to_block(p) for p in content or []) if b is not None]
    if all(b["type"] == "text" for b in blocks):
        return "".join(str(b["text"]) for b in blocks)
    return list(blocks)


def tool_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [p.model_dump(by_alias=True, exclude_none=True) for p in content or []]
    if all(p.get("type") == "text" for p in parts):
        return "".join(str(p.get("text", "")) for p in parts)
    return json.dumps(parts, ensure_ascii=False)


def to_langchain(message: agui.Message) -> BaseMessage | None:
    """One AG-UI message; client-only roles (activity, reasoning) give ``None``."""
    if isinstance(message, agui.UserMessage):
        return HumanMessage(content=user_content(message.content), id=message.id)
    if isinstance(message, (agui.SystemMessage, agui.DeveloperMessage)):
        return SystemMessage(content=str(message.content), id=message.id)
    if isinstance(message, agui.AssistantMessage):
        calls = [
            {
                "id": call.id,
                "name": call.function.name,
                "args": parse_arguments(call.function.arguments),
                "type": "tool_call",
            }
            for call in message.tool_calls or []
        ]
        text = message.content if isinstance(message.content, str) else ""
        return AIMessage(content=text, tool_calls=calls, id=message.id)
    if isinstance(message, agui.ToolMessage):
        return ToolMessage(
            content=tool_content(message.content),
            tool_call_id=message.tool_call_id,
            id=message.id,
            status="error" if message.error else "success",
        )
    return None


def convert_history(messages: Iterable[agui.Message]) -> list[BaseMessage]:
    """A whole client history, repaired so that every provider accepts it."""
    out: list[BaseMessage] = []
    call_names: dict[str, str] = {}
    answered: set[str] = set()
    for message in messages:
        converted = to_langchain(message)
        if converted is None:
            continue
        if isinstance(converted, ToolMessage):
            call_id = converted.tool_call_id
            if call_id not in call_names or call_id in answered:
                log.warning("Dropping a tool message that answers no earlier call: %s", call_id)
                continue
            converted.name = call_names[call_id]
            answered.add(call_id)
            # A client that answers a notebook write in its messages: what it replaced is kept
            # with the call, off the model's view (contract/undo.py).
            converted.content, undo = split_undo(converted.name, converted.content)
            if undo is not None:
                converted.artifact = {UNDO_KEY: undo}
        elif isinstance(converted, AIMessage):
            out.extend(close_dangling(out, call_names, answered))
            call_names.update({c["id"]: c["name"] for c in converted.tool_calls if c["id"]})
        else:
            out.extend(close_dangling(out, call_names, answered))
        out.append(converted)
    return out


def close_dangling(
    history: Sequence[BaseMessage], call_names: dict[str, str], answered: set[str]
) -> list[ToolMessage]:
    """Error results for the calls of the last assistant message that nobody answered."""
    last_ai = next((m for m in reversed(history) if isinstance(m, AIMessage)), None)
    if last_ai is None:
        return []
    results = []
    for call in last_ai.tool_calls:
        call_id = call["id"]
        if call_id and call_id not in answered:
            answered.add(call_id)
            results.append(cancelled_result(call_id, call_names.get(call_id, call["name"])))
    return results


def cancelled_result(call_id: str, name: str) -> ToolMessage:
    return ToolMessage(
        content=f"The {name} call was interrupted before it returned a result.",
        tool_call_id=call_id,
        name=name,
        status="error",
    )
