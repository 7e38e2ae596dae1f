"""``frontend-image-injection``: show the model the photo a client tool sent back.

A tool result is text, so a client tool returns an image as the JSON envelope
``{"mimeType", "data"}`` (base64). Before the next model call this middleware adds a user
message holding the image as a content block shaped for the provider, once per tool call, and
replaces the base64 in the tool result with a short placeholder, so the model does not pay for
the image twice. ``{"error": "..."}`` becomes "Camera unavailable: ...". Both edits go through
the messages reducer, so they are persisted and never repeated. The user message names its call
(:data:`IMAGES_FOR`), so a transcript rebuilt from the thread shows the photo in the
``capture_image`` card again.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from gth_jupyter.contract.names import IMAGES_FOR, INJECTED_MARK, PHOTO_PLACEHOLDER

#: Marks what this middleware wrote, so it is done once and hidden from transcripts.
MARK = INJECTED_MARK

_OPENAI_LIKE = frozenset({"openai", "openrouter", "deepseek", "xai", "groq"})


def image_block(provider: str, mime: str, data: str) -> dict[str, Any]:
    """The image content block each provider accepts (Gaunt Sloth's ``imageBlockFor``)."""
    url = f"data:{mime};base64,{data}"
    if provider == "ollama":
        return {"type": "image_url", "image_url": url}
    if provider in _OPENAI_LIKE:
        return {"type": "image_url", "image_url": {"url": url}}
    if provider == "anthropic":
        return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
    return {"type": "image", "source_type": "base64", "mime_type": mime, "data": data}


def _envelope(message: ToolMessage) -> dict[str, Any] | None:
    if not isinstance(message.content, str):
        return None
    try:
        value = json.loads(message.content)
    except ValueError:
        return None  # not an envelope: left alone, and not marked
    return value if isinstance(value, dict) else None


def placeholder(mime: str, data: str) -> str:
    size_kb = len(data) * 3 // 4 // 1024
    return f"{PHOTO_PLACEHOLDER}{mime}, about {size_kb} KB; shown to you in the next message]"


class _Injection(AgentMiddleware[AgentState[Any], Any, Any]):
    """Before each model call, rewrites the unmarked JSON results of ``tool_name`` (and of
    ``also``) once."""

    def __init__(self, *, provider: str, tool_name: str, also: Collection[str] = ()) -> None:
        super().__init__()
        self.provider = provider
        self.tool_name = tool_name
        self.tool_names = frozenset({tool_name, *also})

    def results(self, messages: list[BaseMessage]) -> list[tuple[ToolMessage, dict[str, Any]]]:
        """The watched tool's results not yet rewritten, with their JSON object."""
        found = []
        for message in messages:
            if not isinstance(message, ToolMessage) or message.name not in self.tool_names:
                continue
            if message.additional_kwargs.get(MARK):
                continue
            envelope = _envelope(message)
            if envelope is not None:
                found.append((message, envelope))
        return found

    def inject(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """The messages to write: rewritten tool results (same id) and new user messages."""
        raise NotImplementedError

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        updates = self.inject(list(state["messages"]))
        return {"messages": updates} if updates else None

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.before_model(state, runtime)


class FrontendImageInjectionMiddleware(_Injection):
    """Turns capture envelopes into vision messages; ``tool_name`` is the watched tool."""

    def __init__(self, *, provider: str = "", tool_name: str = "capture_image") -> None:
        super().__init__(provider=provider, tool_name=tool_name)

    def inject(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        updates: list[BaseMessage] = []
        for message, envelope in self.results(messages):
            if isinstance(envelope.get("error"), str):
                text = f"Camera unavailable: {envelope['error']}"
                updates.append(_marked(message, message.content))
                updates.append(HumanMessage(text, additional_kwargs={MARK: True}))
                continue
            mime, data = envelope.get("mimeType"), envelope.get("data")
            if not isinstance(mime, str) or not isinstance(data, str) or not data:
                continue  # not marked: a later envelope for this call may still succeed
            updates.append(_marked(message, placeholder(mime, data)))
            blocks: list[str | dict[Any, Any]] = [
                {"type": "text", "text": "Camera frame captured:"},
                image_block(self.provider, mime, data),
            ]
            kwargs = {MARK: True, IMAGES_FOR: message.tool_call_id}
            updates.append(HumanMessage(content=blocks, additional_kwargs=kwargs))
        return updates


class ToolImageInjectionMiddleware(_Injection):
    """Shows the model the images a kernel tool returned (``run_python``'s plots), once.

    Such a result is a JSON object with ``images: [{"mimeType", "data"}]``. Before the next model
    call the images move into one user message of provider-shaped image blocks, and each
    ``data`` in the result becomes ``null`` with ``omitted: true``, so the base64 is never in
    the transcript twice. The user message names its call (:data:`IMAGES_FOR`), so a transcript
    can put the images back into the tool card. On by default wherever ``run_python`` is, where
    ``also`` watches ``insert_cell`` too: a cell it ran (``run: true``) comes back from the
    browser in ``run_python``'s shape.
    """

    def __init__(
        self, *, provider: str = "", tool_name: str = "run_python", also: Collection[str] = ()
    ) -> None:
        super().__init__(provider=provider, tool_name=tool_name, also=also)

    def inject(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        updates: list[BaseMessage] = []
        for message, envelope in self.results(messages):
            images = envelope.get("images")
            if not isinstance(images, list):
                continue
            blocks: list[str | dict[Any, Any]] = []
            kept: list[Any] = []
            for image in images:
                mime = image.get("mimeType") if isinstance(image, dict) else None
                data = image.get("data") if isinstance(image, dict) else None
                if isinstance(mime, str) and mime.startswith("image/") and isinstance(data, str):
                    blocks.append(image_block(self.provider, mime, data))
                    kept.append({"mimeType": mime, "data": None, "omitted": True})
                else:
                    kept.append(image)
            if not blocks:
                continue
            shown = json.dumps({**envelope, "images": kept}, ensure_ascii=False)
            updates.append(_marked(message, shown))
            label = f"The {len(blocks)} image(s) {message.name or self.tool_name} produced:"
            content: list[str | dict[Any, Any]] = [{"type": "text", "text": label}, *blocks]
            kwargs = {MARK: True, IMAGES_FOR: message.tool_call_id}
            updates.append(HumanMessage(content=content, additional_kwargs=kwargs))
        return updates


def _marked(message: ToolMessage, content: Any) -> ToolMessage:
    kwargs = {**message.additional_kwargs, MARK: True}
    return message.model_copy(update={"content": content, "additional_kwargs": kwargs})
