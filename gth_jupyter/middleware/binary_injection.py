"""``binary-content-injection``: show the model the file ``gth_read_binary`` read.

A tool result is text, so ``gth_read_binary`` returns Gaunt Sloth's string
``gth_read_binary;type:<type>;path:<URL-encoded>;data:<mime>;base64,<data>``. Before the next
model call this middleware adds a user message "Here is the <image|video|audio|file> content
from the file:" with the content as a block: an image in its provider's shape
(:func:`~gth_jupyter.middleware.image_injection.image_block`), anything else as LangChain's
standard data block ``{type, source_type: "base64", mime_type, data, metadata: {filename}}``
(``binary`` is sent as a ``file``). Like ``capture_image``'s injection, it does so once per tool
call: the result is replaced by a placeholder without the base64 (``placeholder`` in
``tools/fs/binary.py``: the same string up to ``data:<mime>``, then ``size:<bytes>;omitted``), so
the model does not pay for the bytes twice, and both edits are marked (:data:`INJECTED_MARK`)
and persisted through the messages reducer. An image's user message names its call
(:data:`IMAGES_FOR`), so a transcript can show the image in the tool card again (``restore`` in
``tools/fs/binary.py``).

On automatically when ``binaryFormats`` is a non-empty list (``registry.py``), and by name.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from gth_jupyter.contract.names import IMAGES_FOR, INJECTED_MARK
from gth_jupyter.middleware.image_injection import _Injection, _marked, image_block
from gth_jupyter.tools.fs.binary import (
    READ_BINARY,
    BinaryContent,
    parse_binary_content,
    placeholder,
)

__all__ = [
    "NAME",
    "BinaryContentInjectionMiddleware",
    "content_block",
]

NAME = "binary-content-injection"
_LABELS = {"image": "image", "video": "video", "audio": "audio", "file": "file"}


def content_block(provider: str, content: BinaryContent) -> dict[str, Any]:
    """The block the model gets for ``content``."""
    if content.format_type == "image":
        return image_block(provider, content.mime_type, content.data)
    kind = content.format_type if content.format_type in _LABELS else "file"
    return {
        "type": kind,
        "source_type": "base64",
        "mime_type": content.mime_type,
        "data": content.data,
        "metadata": {"filename": content.name},
    }


class BinaryContentInjectionMiddleware(_Injection):
    """Turns ``gth_read_binary`` results into content the model sees, once per call."""

    def __init__(self, *, provider: str = "", tool_name: str = READ_BINARY) -> None:
        super().__init__(provider=provider, tool_name=tool_name)

    def inject(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        updates: list[BaseMessage] = []
        for message in messages:
            if not isinstance(message, ToolMessage) or message.name != self.tool_name:
                continue
            if message.additional_kwargs.get(INJECTED_MARK):
                continue
            content = parse_binary_content(message.content)
            if content is None:
                continue  # an error result, or not this tool's string
            assert isinstance(message.content, str)
            updates.append(_marked(message, placeholder(message.content, content)))
            label = _LABELS.get(content.format_type, "file")
            blocks: list[str | dict[Any, Any]] = [
                {"type": "text", "text": f"Here is the {label} content from the file:"},
                content_block(self.provider, content),
            ]
            kwargs: dict[str, Any] = {INJECTED_MARK: True}
            if content.format_type == "image":
                kwargs[IMAGES_FOR] = message.tool_call_id
            updates.append(HumanMessage(content=blocks, additional_kwargs=kwargs))
        return updates
