"""The scripted model streams, fails and records the way tests and teaching notebooks rely on."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import tool

from gth_jupyter.models import FakeChatModel, FakeModelError, FakeResponsesExhaustedError


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


async def collect(model: Runnable[Any, Any], prompt: Any = "hi") -> list[AIMessageChunk]:
    return [chunk async for chunk in model.astream(prompt)]


def merged(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


async def test_text_streams_token_by_token_and_concatenates_exactly() -> None:
    text = "Hello there,  world!\nSecond line. "
    model = FakeChatModel(responses=[text])

    chunks = await collect(model)

    deltas = [c.text for c in chunks if c.text]
    assert deltas[:3] == ["Hello ", "there,  ", "world!\n"]
    assert "".join(deltas) == text
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].id is not None and chunks[0].id.startswith("fake-")


async def test_a_string_and_a_content_object_give_the_same_answer() -> None:
    model = FakeChatModel(responses=["Same words", {"content": "Same words"}])

    first = await model.ainvoke("a")
    second = await model.ainvoke("b")

    assert first.content == second.content == "Same words"


async def test_tool_calls_stream_their_args_and_merge_to_parsed_calls() -> None:
    model = FakeChatModel(
        responses=[
            {
                "content": "Adding.",
                "toolCalls": [
                    {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_given"},
                    {"name": "capture_image", "args": {}},
                ],
            }
        ]
    )

    chunks = await collect(model)

    pieces = [tc for c in chunks for tc in c.tool_call_chunks]
    first_of_add = pieces[0]
    assert first_of_add["name"] == "add" and first_of_add["id"] == "call_given"
    assert first_of_add["args"] == ""
    add_args = [p["args"] for p in pieces if p["index"] == first_of_add["index"]]
    assert len([a for a in add_args if a]) > 1, "args should arrive in several pieces"
    message = merged(chunks)
    assert message.text == "Adding."
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("add", {"a": 2, "b": 3}),
        ("capture_image", {}),
    ]
    assert message.tool_calls[0]["id"] == "call_given"
    generated_id = message.tool_calls[1]["id"]
    assert generated_id is not None and generated_id.startswith("call_1_")


async def test_reasoning_streams_first_as_a_reasoning_block() -> None:
    model = FakeChatModel(responses=[{"reasoning": "The user greets me.", "content": "Hi!"}])

    chunks = await collect(model)

    first_blocks = chunks[0].content_blocks
    assert first_blocks[0]["type"] == "reasoning"
    message = merged(chunks)
    blocks = message.content_blocks
    assert blocks[0] == {"type": "reasoning", "reasoning": "The user greets me.", "index": 0}
    assert message.text == "Hi!"


async def test_running_out_of_responses_says_how_many_were_used() -> None:
    model = FakeChatModel(responses=["one", "two", "three"])
    for _ in range(3):
        await model.ainvoke("x")

    with pytest.raises(FakeResponsesExhaustedError) as info:
        await model.ainvoke("x")

    assert info.value.code == "fake_responses_exhausted"
    assert str(info.value) == (
        "The fake model has no scripted response left: all 3 were used. "
        "Add more entries to llm.responses."
    )


async def test_a_scripted_error_raises_after_the_partial_text() -> None:
    model = FakeChatModel(responses=[{"content": "Partial answer", "error": "overloaded"}])
    seen: list[str] = []

    with pytest.raises(FakeModelError, match="overloaded") as info:
        async for chunk in model.astream("x"):
            seen.append(chunk.text)

    assert "".join(seen) == "Partial answer"
    assert info.value.code == "model_error"


def test_a_bad_script_item_is_named_by_its_index() -> None:
    with pytest.raises(ValueError) as info:
        FakeChatModel(responses=["a", "b", {"toolCalls": [{"args": {}}]}])
    assert str(info.value) == "responses[2].toolCalls[0].name: Field required"

    with pytest.raises(ValueError, match=r"responses\[0\]\.toolcalls: Extra inputs"):
        FakeChatModel(responses=[{"toolcalls": []}])

    with pytest.raises(ValueError, match=r"responses\[1\]: expected a string or an object"):
        FakeChatModel(responses=["ok", 42])


async def test_every_call_input_is_recorded_in_memory_and_to_the_record_file(
    tmp_path: Path,
) -> None:
    record = tmp_path / "calls.jsonl"
    model = FakeChatModel(responses=["one", "two"], recordPath=str(record))
    photo = HumanMessage(
        content=[
            {"type": "text", "text": "Camera frame captured:"},
            {"type": "image", "base64": "aGVsbG8=", "mime_type": "image/jpeg"},
        ]
    )

    await model.ainvoke([HumanMessage("first")])
    model.invoke([photo])

    assert [[m.content for m in call] for call in model.received] == [["first"], [photo.content]]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(lines) == 2
    assert lines[0]["messages"][0]["content"] == "first"
    assert lines[1]["messages"][0]["content"][1]["mime_type"] == "image/jpeg"


async def test_the_script_position_is_shared_by_bound_copies_and_reset_rewinds_it() -> None:
    model = FakeChatModel(responses=["first", "second"])
    bound = model.bind_tools([add])

    assert (await bound.ainvoke("x")).content == "first"
    assert (await model.bind_tools([add]).ainvoke("x")).content == "second"
    assert model.received_tool_names == [["add"], ["add"]]

    model.reset()

    assert (await bound.ainvoke("x")).content == "first"
    assert len(model.received) == 1


def test_sync_stream_and_invoke_follow_the_same_script() -> None:
    model = FakeChatModel(responses=["one two three", {"toolCalls": [{"name": "add"}]}])

    chunks = list(model.stream("x"))
    result = model.invoke("x")

    assert "".join(c.text for c in chunks) == "one two three"
    assert len([c for c in chunks if c.text]) == 3
    assert result.tool_calls[0]["name"] == "add"


async def test_token_delay_paces_the_stream_and_a_stop_ends_it_at_once() -> None:
    paced = FakeChatModel(responses=["a b c d e"], tokenDelayMs=30)
    started = time.monotonic()
    await paced.ainvoke("x")
    assert time.monotonic() - started >= 4 * 0.03 * 0.9

    slow = FakeChatModel(responses=[{"content": "one two three", "delayMs": 5000}])
    started = time.monotonic()
    stream = slow.astream("x")
    first = await asyncio.wait_for(anext(stream), timeout=1)
    await stream.aclose()  # what a Stop button does to a run
    assert first.text == "one "
    assert time.monotonic() - started < 1
