"""What each model call was sent, kept so a person can see it (``GET gth/threads/{id}/context``).

The innermost middleware sees the request exactly as the model gets it: the system prompt (the
client's context added), the history after every other middleware (Gaunt Sloth's summarization
included), each tool result as the model reads it, and the tools offered. It writes a bounded
record of it per call: every item's role, kind, size and estimated tokens (about four characters
a token), its text cut to ``ITEM_CHARS``, images as placeholders naming their type and size,
and the whole record within ``CALL_BYTES`` (the cut said). The record is keyed by the assistant
message the call answered with, and the run stores the records in the thread's index when it
ends (``Runtime.stream``), beside its checkpoints: they outlive the run's journal.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage

from ..contract.run import RunContext
from ..contract.usage import TokenCounts, estimate_tokens

__all__ = ["CALL_BYTES", "ITEM_CHARS", "ModelCallRecorder", "describe_call"]

#: The most a call's record keeps (JSON bytes).
CALL_BYTES = 256 * 1024
#: The most of one item's text a record keeps.
ITEM_CHARS = 4000


def _block_text(block: Any) -> tuple[str, str | None]:
    """``(text, placeholder)`` of one content block: its text, or a media block's placeholder."""
    if isinstance(block, str):
        return block, None
    if not isinstance(block, Mapping):
        return str(block), None
    kind = str(block.get("type") or "")
    if kind == "text":
        return str(block.get("text") or ""), None
    if kind in ("image", "image_url", "file", "audio", "video") or "source" in block:
        data = _media_data(block)
        mime = str(
            block.get("mime_type")
            or (block.get("source") or {}).get("media_type")  # type: ignore[union-attr]
            or _data_url_mime(block)
            or kind
        )
        return "", f"[{kind or 'media'}: {mime}, {_size(len(data) * 3 // 4)}]"
    return json.dumps(block, default=str), None


def _media_data(block: Mapping[str, Any]) -> str:
    source = block.get("source")
    if isinstance(source, Mapping) and isinstance(source.get("data"), str):
        return str(source["data"])
    if isinstance(block.get("data"), str):
        return str(block["data"])
    url = block.get("image_url")
    url = url.get("url") if isinstance(url, Mapping) else url
    return str(url) if isinstance(url, str) else ""


def _data_url_mime(block: Mapping[str, Any]) -> str | None:
    url = block.get("image_url")
    url = url.get("url") if isinstance(url, Mapping) else url
    if isinstance(url, str) and url.startswith("data:"):
        return url[5:].split(";", 1)[0]
    return None


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


def _role(message: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}.get(
        message.type, message.type
    )


def _item(message: BaseMessage, names: Mapping[str, str]) -> dict[str, Any]:
    """One message as the record keeps it."""
    content = message.content
    blocks = [content] if isinstance(content, str) else list(content)
    texts: list[str] = []
    media: list[str] = []
    for block in blocks:
        text, placeholder = _block_text(block)
        texts.append(text)
        if placeholder:
            media.append(placeholder)
    text = "".join(texts)
    role = _role(message)
    kind = "text"
    if role == "tool":
        call_id = str(getattr(message, "tool_call_id", "") or "")
        kind = f"{names.get(call_id) or getattr(message, 'name', None) or 'tool'} result"
    elif isinstance(message, AIMessage) and message.tool_calls:
        calls = ", ".join(str(c.get("name")) for c in message.tool_calls)
        kind = f"tool calls: {calls}"
        text += "".join(json.dumps(c.get("args"), default=str) for c in message.tool_calls)
    elif media and not text.strip():
        kind = "image"
    # Images cost tokens too; the estimate counts a placeholder's worth, the size says more.
    tokens = estimate_tokens(text) + 85 * len(media)
    item: dict[str, Any] = {
        "role": role,
        "kind": kind,
        "tokens": tokens,
        "chars": len(text),
        "content": "\n".join([*media, text] if text else media),
    }
    if len(item["content"]) > ITEM_CHARS:
        item["content"] = item["content"][:ITEM_CHARS]
        item["cut"] = True
    return item


def _tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    for tool in tools or ():
        name = tool.get("name") or tool.get("type") if isinstance(tool, Mapping) else None
        name = name or getattr(tool, "name", None)
        if isinstance(name, str):
            names.append(name)
    return names


def describe_call(request: ModelRequest[Any], answer: AIMessage | None) -> dict[str, Any]:
    """The record of one call: ``{"model", "usage", "messages", "tools", "cut"?}``, within
    ``CALL_BYTES``: past it, the oldest items lose their text first (their sizes stay)."""
    names = {
        str(call.get("id")): str(call.get("name"))
        for m in request.messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
    }
    items: list[dict[str, Any]] = []
    system = request.system_message
    if system is not None:
        items.append({**_item(system, names), "kind": "system prompt"})
    items.extend(_item(m, names) for m in request.messages)
    usage = getattr(answer, "usage_metadata", None) if answer is not None else None
    counts = TokenCounts.from_metadata(usage) if isinstance(usage, Mapping) else None
    meta = (answer.response_metadata or {}) if answer is not None else {}
    model = meta.get("model_name") or meta.get("model") or getattr(request.model, "model", "")
    record: dict[str, Any] = {
        "model": str(model or ""),
        "usage": counts.to_json() if counts else None,
        "messages": items,
        "tools": _tool_names(request.tools),
    }
    size = len(json.dumps(record, ensure_ascii=False).encode())
    for item in items:  # oldest first: the end of the conversation is what a person checks
        if size <= CALL_BYTES:
            break
        before = len(json.dumps(item["content"], ensure_ascii=False).encode())
        item["content"], item["cut"] = "", True
        size -= before - 2
        record["cut"] = f"Kept within {CALL_BYTES // 1024} KiB: the oldest items' text left out."
    return record


class ModelCallRecorder(AgentMiddleware[AgentState[Any], RunContext, Any]):
    """Records each call's request (innermost: after every other middleware changed it) into
    the run's ``RunContext.model_calls``, by the id of the message it answered with."""

    async def awrap_model_call(
        self,
        request: ModelRequest[RunContext],
        handler: Callable[[ModelRequest[RunContext]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        response = await handler(request)
        _keep(request, response)
        return response

    def wrap_model_call(
        self,
        request: ModelRequest[RunContext],
        handler: Callable[[ModelRequest[RunContext]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        response = handler(request)
        _keep(request, response)
        return response


def _keep(request: ModelRequest[RunContext], response: ModelResponse[Any]) -> None:
    ctx = request.runtime.context if request.runtime is not None else None
    if not isinstance(ctx, RunContext):
        return
    answer = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    if answer is None or not answer.id:
        return
    try:
        ctx.model_calls[answer.id] = json.dumps(describe_call(request, answer), default=str)
    except Exception:  # a record that cannot be written never fails the run
        return
