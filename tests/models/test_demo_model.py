"""The offline demo model's rules, as a first-time user meets them in the notebook chat."""

from __future__ import annotations

import base64
import json
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import tool

from gth_jupyter.models import DemoChatModel


@tool
def capture_image() -> str:
    """Takes a photo with the user's webcam."""
    return ""


@tool
def show_a2ui_surface(surfaceJsonl: str) -> str:
    """Shows an A2UI surface."""
    return surfaceJsonl


def demo(*tools: Any) -> Any:
    model = DemoChatModel(tokenDelayMs=0)
    return model.bind_tools(list(tools)) if tools else model


async def reply(messages: list[BaseMessage], *tools: Any) -> AIMessageChunk:
    chunks = [chunk async for chunk in demo(*tools).astream(messages)]
    assert len({c.id for c in chunks}) == 1
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def photo_call(call_id: str = "call_1") -> AIMessage:
    return AIMessage(
        content="Sure.", tool_calls=[{"name": "capture_image", "args": {}, "id": call_id}]
    )


async def test_a_photo_request_calls_capture_image_when_the_widget_offers_it() -> None:
    message = await reply([HumanMessage("Please take a photo of me")], capture_image)

    assert message.text
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [("capture_image", {})]


async def test_a_photo_request_without_the_camera_tool_explains_where_it_exists() -> None:
    message = await reply([HumanMessage("what do you see?")])

    assert message.tool_calls == []
    assert "capture_image" in message.text and "widget" in message.text


async def test_a_form_request_shows_a_v08_sign_up_form() -> None:
    message = await reply([HumanMessage("Show me a form")], show_a2ui_surface)

    [call] = message.tool_calls
    assert call["name"] == "show_a2ui_surface"
    lines = [json.loads(line) for line in call["args"]["surfaceJsonl"].splitlines()]
    assert len(lines) == 2
    update, begin = lines
    assert begin["beginRendering"]["surfaceId"] == update["surfaceUpdate"]["surfaceId"]
    components = {c["id"]: c["component"] for c in update["surfaceUpdate"]["components"]}
    root = components[begin["beginRendering"]["root"]]
    children = root["Column"]["children"]["explicitList"]
    kinds = [next(iter(components[child])) for child in children]
    assert kinds == ["Text", "TextField", "TextField", "Button"]
    button = components[children[-1]]["Button"]
    assert button["label"] == {"literalString": "Submit"}
    assert button["action"]["name"] == "submit_form"
    assert {item["key"] for item in button["action"]["context"]} == {"name", "email"}


async def test_a_form_request_without_the_surface_tool_explains_how_to_enable_it() -> None:
    message = await reply([HumanMessage("I'd like to give feedback")], capture_image)

    assert message.tool_calls == []
    assert "show_a2ui_surface" in message.text and "builtInTools" in message.text


async def test_a_captured_photo_is_acknowledged_with_its_type_and_size() -> None:
    data = base64.b64encode(b"\xff" * 30_000).decode()
    result = ToolMessage(
        json.dumps({"mimeType": "image/jpeg", "data": data}),
        tool_call_id="call_1",
        name="capture_image",
    )

    message = await reply([HumanMessage("take a photo"), photo_call(), result], capture_image)

    assert message.tool_calls == []
    assert "image/jpeg" in message.text and "29 KB" in message.text
    assert "vision model" in message.text and '"llm"' in message.text
    assert message.text.count("offline") == 1


async def test_a_photo_injected_as_an_image_block_is_acknowledged() -> None:
    data = base64.b64encode(b"\x00" * 4096).decode()
    placeholder = ToolMessage(
        "[photo captured: image/png, sent to the model as an image]", tool_call_id="call_1"
    )
    injected = HumanMessage(
        content=[
            {"type": "text", "text": "Camera frame captured:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
        ]
    )

    after_placeholder = await reply([photo_call(), placeholder], capture_image)
    after_injection = await reply([photo_call(), placeholder, injected], capture_image)

    assert "received a photo" in after_placeholder.text
    assert "image/png" in after_injection.text and "4 KB" in after_injection.text
    # It says plainly that the photo reached it as an image and that it cannot describe it.
    assert "as an image" in after_injection.text and "can't describe" in after_injection.text


async def test_the_demo_reports_a_photos_pixel_size_and_how_it_arrived() -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), "red").save(buffer, "JPEG")
    data = base64.b64encode(buffer.getvalue()).decode()
    as_text = ToolMessage(
        json.dumps({"mimeType": "image/jpeg", "data": data}), tool_call_id="call_1"
    )
    injected = HumanMessage(
        content=[{"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}}]
    )

    text_only = await reply([photo_call(), as_text], capture_image)
    seen = await reply([photo_call(), as_text, injected], capture_image)

    assert "64x48 px" in text_only.text and "64x48 px" in seen.text
    assert "not as an image" in text_only.text and "frontend-image-injection" in text_only.text
    assert "reached me **as an image**" in seen.text


async def test_an_unavailable_camera_is_reported_with_its_reason() -> None:
    result = ToolMessage(
        json.dumps({"error": "Webcam not initialized"}), tool_call_id="call_1"
    )  # no name: the demo finds it through the earlier tool call

    message = await reply([HumanMessage("selfie!"), photo_call(), result], capture_image)

    assert "camera was unavailable" in message.text
    assert "Webcam not initialized" in message.text
    assert message.tool_calls == []


async def test_after_the_form_is_shown_the_user_is_asked_to_fill_it_in() -> None:
    result = ToolMessage("{...}", tool_call_id="call_1", name="show_a2ui_surface")

    message = await reply([HumanMessage("form please"), result], show_a2ui_surface)

    assert message.text == "Here is the form. Fill it in and press Submit."


async def test_a_submitted_form_is_thanked_and_its_values_echoed() -> None:
    action = {
        "actionName": "submit_form",
        "sourceComponentId": "submit",
        "timestamp": "2025-01-01T00:00:00Z",
        "context": {"name": "Ada Lovelace", "email": "ada@example.org"},
    }

    message = await reply([HumanMessage(json.dumps(action))], show_a2ui_surface)

    assert message.text.startswith("Thanks")
    assert "- **name**: Ada Lovelace" in message.text
    assert "- **email**: ada@example.org" in message.text


async def test_anything_else_introduces_the_demo_and_how_to_configure_a_real_model() -> None:
    message = await reply([HumanMessage("hello")], capture_image, show_a2ui_surface)

    text = message.text
    assert message.tool_calls == []
    assert text.count("offline") == 1
    assert ".gsloth.config.json" in text and "gth-jupyter[anthropic]" in text
    assert "take a photo" in text and "show me a form" in text
    assert len(text.split()) > 20


async def test_odd_histories_still_get_an_answer() -> None:
    odd_inputs: list[list[BaseMessage]] = [
        [],
        [HumanMessage(content=[{"type": "weird", "payload": 1}, "text part"])],
        [ToolMessage("42", tool_call_id="nobody")],
        [HumanMessage(json.dumps({"actionName": "x", "context": [{"key": "k", "value": 3}]}))],
        [AIMessage("I spoke last")],
    ]

    for messages in odd_inputs:
        message = await reply(messages, capture_image)
        assert message.text, messages


async def test_demo_streams_at_a_readable_pace_by_default() -> None:
    model = DemoChatModel()
    chunks = [c async for c in model.astream("hello")]

    assert model.token_delay_ms == 12
    assert len([c for c in chunks if c.text]) > 20
    assert model._llm_type == "demo" and model.model == "gth-demo (offline)"


def test_demo_calls_a_named_user_tool_with_key_value_arguments() -> None:
    from langchain_core.messages import HumanMessage as Human

    from gth_jupyter.models.demo._rules import plan_demo_reply

    reply = plan_demo_reply(
        [Human('Use roll_dice with n=3 and label="two words".')], ["roll_dice", "capture_image"]
    )
    assert [(c.name, c.args) for c in reply.tool_calls] == [
        ("roll_dice", {"n": 3, "label": "two words"})
    ]
    # A tool the user does not name is never called.
    assert not plan_demo_reply([Human("hello")], ["roll_dice"]).tool_calls
