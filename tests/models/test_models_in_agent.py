"""The offline models drive a real ``create_agent`` loop with a checkpointer."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from gth_jupyter.models import DemoChatModel, FakeChatModel

THREAD = {"configurable": {"thread_id": "thread-1"}}


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@tool
def capture_image() -> str:
    """Takes a photo with the user's webcam (here: a fixed small JPEG envelope)."""
    return json.dumps({"mimeType": "image/jpeg", "data": base64.b64encode(b"\xff" * 2048).decode()})


async def test_a_scripted_tool_call_runs_the_tool_and_the_answer_streams() -> None:
    model = FakeChatModel(
        responses=[
            {"content": "Let me add.", "toolCalls": [{"name": "add", "args": {"a": 2, "b": 3}}]},
            "The sum is 5.",
        ]
    )
    agent = create_agent(model, tools=[add], checkpointer=InMemorySaver())

    streamed: list[str] = []
    async for chunk, _meta in agent.astream(
        {"messages": [HumanMessage("What is 2 + 3?")]}, THREAD, stream_mode="messages"
    ):
        if isinstance(chunk, AIMessageChunk) and chunk.text:
            streamed.append(chunk.text)

    state = await agent.aget_state(THREAD)
    messages = state.values["messages"]
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    tool_result = messages[2]
    assert isinstance(tool_result, ToolMessage) and tool_result.content == "5"
    assert messages[-1].content == "The sum is 5."
    assert streamed == ["Let ", "me ", "add.", "The ", "sum ", "is ", "5."]
    second_call = model.received[1]
    assert isinstance(second_call[-1], ToolMessage) and second_call[-1].content == "5"
    assert model.received_tool_names == [["add"], ["add"]]


async def test_the_next_turn_on_the_same_thread_continues_the_script() -> None:
    model = FakeChatModel(responses=["First answer.", "Second answer."])
    agent = create_agent(model, tools=[add], checkpointer=InMemorySaver())

    await agent.ainvoke({"messages": [HumanMessage("one")]}, THREAD)
    result = await agent.ainvoke({"messages": [HumanMessage("two")]}, THREAD)

    assert result["messages"][-1].content == "Second answer."
    assert [m.content for m in model.received[1]] == ["one", "First answer.", "two"]


async def test_the_demo_takes_a_photo_and_then_answers_without_looping() -> None:
    agent = create_agent(
        DemoChatModel(tokenDelayMs=0), tools=[capture_image, add], checkpointer=InMemorySaver()
    )

    result = await agent.ainvoke({"messages": [HumanMessage("take a photo")]}, THREAD)

    messages = result["messages"]
    assert isinstance(messages[1], AIMessage)
    assert messages[1].tool_calls[0]["name"] == "capture_image"
    assert isinstance(messages[2], ToolMessage)
    final = messages[-1]
    assert len(messages) == 4
    assert "received a photo" in final.text and "image/jpeg" in final.text


async def test_the_demo_greets_in_the_agent_loop() -> None:
    agent = create_agent(DemoChatModel(tokenDelayMs=0), tools=[add], checkpointer=InMemorySaver())

    result: dict[str, Any] = await agent.ainvoke({"messages": [HumanMessage("hi")]}, THREAD)

    assert len(result["messages"]) == 2
    assert ".gsloth.config.json" in result["messages"][-1].text


async def test_the_async_graph_streams_without_the_threaded_sync_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A sync-only model costs 5x through an async graph: each chunk is handed over by a thread.
    def no_sync_stream(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the async graph fell back to the sync _stream")

    monkeypatch.setattr(FakeChatModel, "_stream", no_sync_stream)
    monkeypatch.setattr(DemoChatModel, "_stream", no_sync_stream)
    fake = FakeChatModel(
        responses=[{"toolCalls": [{"name": "add", "args": {"a": 1, "b": 1}}]}, "2"]
    )

    for model in (fake, DemoChatModel(tokenDelayMs=0)):
        agent = create_agent(model, tools=[add], checkpointer=InMemorySaver())
        texts = [
            chunk.text
            async for chunk, _meta in agent.astream(
                {"messages": [HumanMessage("hi")]}, THREAD, stream_mode="messages"
            )
            if isinstance(chunk, AIMessageChunk)
        ]
        assert "".join(texts)
