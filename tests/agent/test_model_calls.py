"""What a model call's record keeps (``agent/model_calls.py``): images as placeholders with
their type and size, never their bytes; tool results named by their tool."""

from __future__ import annotations

import json

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from gth_jupyter.agent.model_calls import describe_call
from gth_jupyter.models.fake import FakeChatModel

PHOTO = "A" * 40_000  # base64 of a 30 KB JPEG


def test_an_image_is_a_placeholder_naming_its_type_and_size() -> None:
    messages = [
        HumanMessage(
            content=[
                {"type": "text", "text": "What do you see?"},
                {
                    "type": "image",
                    "source_type": "base64",
                    "mime_type": "image/jpeg",
                    "data": PHOTO,
                },
            ]
        ),
        AIMessage(content="", tool_calls=[{"id": "c1", "name": "capture_image", "args": {}}]),
        ToolMessage(content="[photo]", tool_call_id="c1"),
        HumanMessage(
            content=[{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PHOTO}"}}]
        ),
    ]
    request = ModelRequest(
        model=FakeChatModel(), messages=messages, system_message=None, tools=[], state={}
    )
    record = describe_call(request, AIMessage(content="A cat."))
    asked, calls, result, image = record["messages"]
    assert asked["kind"] == "text" and asked["content"].startswith("[image: image/jpeg, 29 KB]")
    assert "What do you see?" in asked["content"]
    assert calls["kind"] == "tool calls: capture_image"
    assert result["kind"] == "capture_image result"
    assert image["kind"] == "image" and image["content"] == "[image_url: image/png, 29 KB]"
    assert PHOTO not in json.dumps(record)  # never the bytes
