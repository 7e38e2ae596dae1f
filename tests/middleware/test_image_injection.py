"""frontend-image-injection: the model sees the photo once, as its provider wants it."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from gth_jupyter.agui import thread_view
from gth_jupyter.contract.names import IMAGES_FOR
from gth_jupyter.middleware.image_injection import (
    MARK,
    FrontendImageInjectionMiddleware,
    image_block,
)
from tests.conftest import CAMERA_TOOL, body, run_events

ENVELOPE = json.dumps({"mimeType": "image/jpeg", "data": "QUJD" * 100})


def capture(content: str, call_id: str = "c1") -> list:
    return [
        HumanMessage("photo"),
        AIMessage("", tool_calls=[{"id": call_id, "name": "capture_image", "args": {}}]),
        ToolMessage(content, tool_call_id=call_id, name="capture_image", id=f"t-{call_id}"),
    ]


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        (
            "anthropic",
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/jpeg", "data": "D"},
            },
        ),
        ("openai", {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,D"}}),
        ("ollama", {"type": "image_url", "image_url": "data:image/jpeg;base64,D"}),
        (
            "google-genai",
            {"type": "image", "source_type": "base64", "mime_type": "image/jpeg", "data": "D"},
        ),
    ],
)
def test_block_shape_per_provider(provider: str, expected: dict) -> None:
    assert image_block(provider, "image/jpeg", "D") == expected


def test_envelope_becomes_a_vision_message_and_a_placeholder() -> None:
    middleware = FrontendImageInjectionMiddleware(provider="anthropic")
    updates = middleware.inject(capture(ENVELOPE))
    tool, human = updates
    assert isinstance(tool, ToolMessage) and tool.id == "t-c1"
    assert "QUJD" not in tool.content and "image/jpeg" in tool.content
    assert tool.additional_kwargs[MARK] is True
    assert isinstance(human, HumanMessage)
    assert human.content[0] == {"type": "text", "text": "Camera frame captured:"}
    assert human.content[1]["source"]["data"] == "QUJD" * 100
    # Once marked, nothing more is injected for that call.
    assert middleware.inject([*capture(ENVELOPE)[:2], tool, human]) == []


def test_the_vision_message_names_its_call() -> None:
    _, human = FrontendImageInjectionMiddleware().inject(capture(ENVELOPE, "c7"))
    assert human.additional_kwargs[IMAGES_FOR] == "c7"


def test_error_envelope_tells_the_model_the_camera_was_unavailable() -> None:
    updates = FrontendImageInjectionMiddleware().inject(capture('{"error": "Permission denied"}'))
    assert updates[-1].content == "Camera unavailable: Permission denied"


@pytest.mark.parametrize("content", ["not json", '{"mimeType": "image/jpeg"}', "[1, 2]"])
def test_other_results_are_left_alone(content: str) -> None:
    assert FrontendImageInjectionMiddleware().inject(capture(content)) == []


def test_other_tools_and_a_custom_tool_name() -> None:
    middleware = FrontendImageInjectionMiddleware(tool_name="snap")
    assert middleware.inject(capture(ENVELOPE)) == []


async def test_through_the_agent_the_model_receives_an_image_block(make_runtime) -> None:
    runtime = make_runtime([{"toolCalls": [{"name": "capture_image"}]}, "I see it."])
    # Rebuild the runtime with the middleware, as the configuration would.
    from gth_jupyter.agent.runtime import Runtime

    runtime = Runtime(
        runtime.model,
        runtime.tools,
        checkpointer=runtime.checkpointer,
        middleware=[FrontendImageInjectionMiddleware(provider="openai")],
    )
    history = [{"id": "u1", "role": "user", "content": "photo please"}]
    events = await run_events(runtime, body("t", "r1", history, tools=[CAMERA_TOOL]))
    call_id = events[-1]["outcome"]["pendingToolCallIds"][0]
    resume = [{"interruptId": call_id, "status": "resolved", "payload": ENVELOPE}]
    await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL], resume=resume))
    seen = runtime.model.received[-1]
    image_messages = [
        m for m in seen if isinstance(m, HumanMessage) and isinstance(m.content, list)
    ]
    assert image_messages and image_messages[0].content[1]["type"] == "image_url"
    tool_message = next(m for m in seen if isinstance(m, ToolMessage))
    assert "QUJD" not in tool_message.content


async def test_the_photo_comes_back_in_the_card_after_a_reload(make_runtime) -> None:
    """The thread keeps the photo once (in the message for the model); the views a widget
    rebuilds from, one cell's turn and the whole thread (``%gth`` alone), show it in the
    ``capture_image`` card again, as the envelope the browser sent."""
    from gth_jupyter.agent.runtime import Runtime

    runtime = make_runtime([{"toolCalls": [{"name": "capture_image"}]}, "I see it."])
    runtime = Runtime(
        runtime.model,
        runtime.tools,
        checkpointer=runtime.checkpointer,
        middleware=[FrontendImageInjectionMiddleware(provider="anthropic")],
    )
    history = [{"id": "u1", "role": "user", "content": "photo please"}]
    cell = {"forwardedProps": {"gth": {"turnId": "cell-1"}}}
    events = await run_events(runtime, body("t", "r1", history, tools=[CAMERA_TOOL], **cell))
    call_id = events[-1]["outcome"]["pendingToolCallIds"][0]
    resume = [{"interruptId": call_id, "status": "resolved", "payload": ENVELOPE}]
    await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL], resume=resume, **cell))

    state = await runtime.thread_state("t")
    stored = json.dumps([m.model_dump() for m in state.messages])
    assert stored.count("QUJD" * 100) == 1  # kept once, for the model
    for view in (await thread_view(runtime, "t", "cell-1"), await thread_view(runtime, "t")):
        (tool,) = [m for m in view["messages"] if m["role"] == "tool"]
        assert tool["toolCallId"] == call_id
        assert json.loads(tool["content"]) == json.loads(ENVELOPE)
        # The message for the model stays out of the transcript.
        assert [m["role"] for m in view["messages"]] == ["user", "assistant", "tool", "assistant"]
