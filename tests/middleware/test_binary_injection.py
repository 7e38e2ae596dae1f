"""binary-content-injection: a file gth_read_binary read reaches the model once, as a content
block in a user message, and the tool message keeps a placeholder without the base64."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from gth_jupyter.config.schema import BinaryFormatConfig
from gth_jupyter.contract.names import IMAGES_FOR, INJECTED_MARK
from gth_jupyter.middleware import build_middleware
from gth_jupyter.middleware.binary_injection import (
    BinaryContentInjectionMiddleware,
    content_block,
)
from gth_jupyter.middleware.image_injection import image_block
from gth_jupyter.models import FakeChatModel
from gth_jupyter.tools.fs.binary import make_read_binary_tool, parse_binary_content, restore
from gth_jupyter.tools.fs.workspace import Workspace
from tests.middleware.test_middleware_registry import build, effective

PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ"
    "AAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
FORMATS = [
    BinaryFormatConfig.model_validate(e)
    for e in (
        {"type": "image", "extensions": ["png"]},
        {"type": "file", "extensions": ["pdf"]},
        {"type": "audio", "extensions": ["mp3"]},
        {"type": "binary", "extensions": ["bin"]},
    )
]


def result(kind: str, mime: str, data: str, name: str = "/w/a%3Bb.png") -> str:
    return f"gth_read_binary;type:{kind};path:{name};data:{mime};base64,{data}"


def read(content: str, call_id: str = "c1") -> list[Any]:
    return [
        HumanMessage("look"),
        AIMessage("", tool_calls=[{"id": call_id, "name": "gth_read_binary", "args": {}}]),
        ToolMessage(content, tool_call_id=call_id, name="gth_read_binary", id=f"t-{call_id}"),
    ]


def test_an_image_becomes_a_provider_shaped_block_once() -> None:
    mw = BinaryContentInjectionMiddleware(provider="anthropic")
    messages = read(result("image", "image/png", PNG_B64))
    tool, human = mw.inject(messages)
    assert isinstance(tool, ToolMessage) and tool.id == "t-c1"
    assert tool.additional_kwargs[INJECTED_MARK] is True
    assert PNG_B64 not in tool.content
    assert tool.content.startswith("gth_read_binary;type:image;path:/w/a%3Bb.png;data:image/png;")
    assert ";size:70;omitted" in tool.content
    assert isinstance(human, HumanMessage)
    assert human.content == [
        {"type": "text", "text": "Here is the image content from the file:"},
        image_block("anthropic", "image/png", PNG_B64),
    ]
    assert human.additional_kwargs == {INJECTED_MARK: True, IMAGES_FOR: "c1"}
    # Once: the rewritten result is marked, and the placeholder does not parse anyway.
    assert mw.inject([*messages[:2], tool, human]) == []
    assert mw.inject([*messages[:2], tool.model_copy(update={"additional_kwargs": {}})]) == []
    # A transcript can put the image back into the tool card.
    assert restore(str(tool.content), [("image/png", PNG_B64)]) == messages[2].content


@pytest.mark.parametrize(
    ("kind", "mime", "label", "block_type"),
    [
        ("file", "application/pdf", "file", "file"),
        ("audio", "audio/mpeg", "audio", "audio"),
        ("video", "video/mp4", "video", "video"),
        ("binary", "application/octet-stream", "file", "file"),
    ],
)
def test_other_formats_are_standard_data_blocks(
    kind: str, mime: str, label: str, block_type: str
) -> None:
    mw = BinaryContentInjectionMiddleware(provider="openai")
    _, human = mw.inject(read(result(kind, mime, "QUJD", "%2Fw%2Fdoc.pdf")))
    assert human.content == [
        {"type": "text", "text": f"Here is the {label} content from the file:"},
        {
            "type": block_type,
            "source_type": "base64",
            "mime_type": mime,
            "data": "QUJD",
            "metadata": {"filename": "doc.pdf"},
        },
    ]
    assert IMAGES_FOR not in human.additional_kwargs


def test_errors_and_other_tools_are_left_alone() -> None:
    mw = BinaryContentInjectionMiddleware()
    assert (
        mw.inject(read("Path is not within allowed directories or is blocked by .aiignore")) == []
    )
    other = read(result("image", "image/png", PNG_B64))
    other[2] = other[2].model_copy(update={"name": "read_file"})
    assert mw.inject(other) == []


def test_every_unmarked_read_is_injected_not_only_the_last_five() -> None:
    mw = BinaryContentInjectionMiddleware(provider="openai")
    messages = [m for i in range(4) for m in read(result("image", "image/png", PNG_B64), f"c{i}")]
    updates = mw.inject(messages)
    assert len(updates) == 8
    assert [u.additional_kwargs.get(IMAGES_FOR) for u in updates[1::2]] == ["c0", "c1", "c2", "c3"]


def test_content_block_for_providers() -> None:
    parsed = parse_binary_content(result("image", "image/png", "QUJD"))
    assert parsed is not None
    assert content_block("ollama", parsed) == {
        "type": "image_url",
        "image_url": "data:image/png;base64,QUJD",
    }
    assert content_block("", parsed)["source_type"] == "base64"


def test_on_when_binary_formats_are_configured(tmp_path: Path) -> None:
    formats = [{"type": "image", "extensions": ["png"]}]
    eff = effective(tmp_path, {"binaryFormats": formats})
    _, injection = build(eff, tmp_path)
    assert isinstance(injection, BinaryContentInjectionMiddleware)
    assert injection.provider == "fake" and injection.tool_name == "gth_read_binary"
    assert len(build(effective(tmp_path, {}), tmp_path)) == 1
    assert len(build(effective(tmp_path, {"binaryFormats": []}), tmp_path)) == 1
    named = effective(
        tmp_path, {"binaryFormats": formats, "middleware": ["binary-content-injection"]}
    )
    _, only = build(named, tmp_path)  # named: not added a second time
    assert isinstance(only, BinaryContentInjectionMiddleware)
    _, by_name = build(effective(tmp_path, {"middleware": ["binary-content-injection"]}), tmp_path)
    assert isinstance(by_name, BinaryContentInjectionMiddleware)


async def test_the_model_sees_one_image_block_and_no_base64_in_the_tool_message(
    tmp_path: Path,
) -> None:
    (tmp_path / "dot.png").write_bytes(base64.b64decode(PNG_B64))
    record = tmp_path / "record.jsonl"
    call = {"toolCalls": [{"name": "gth_read_binary", "args": {"path": "dot.png"}, "id": "c1"}]}
    model = FakeChatModel(responses=[call, "A dot.", "Still a dot."], recordPath=str(record))
    tool = make_read_binary_tool(Workspace.at(tmp_path), FORMATS)
    eff = effective(tmp_path, {"binaryFormats": [{"type": "image", "extensions": ["png"]}]})
    middleware = build_middleware(eff, model=model, cwd=tmp_path, answers_approvals=True)[1:]
    graph = create_agent(model, [tool], middleware=middleware, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    await graph.ainvoke({"messages": [HumanMessage("what is in dot.png?")]}, config)
    await graph.ainvoke({"messages": [HumanMessage("and now?")]}, config)

    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(calls) == 3
    for later in calls[1:]:  # the turn's next call, and the next turn's: the image once
        blocks = [
            b
            for m in later["messages"]
            if m["type"] == "human" and isinstance(m["content"], list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") != "text"
        ]
        (block,) = blocks  # LangChain may restate the standard block in its v1 shape
        assert block["type"] == "image" and block["mime_type"] == "image/png"
        assert PNG_B64 in (block.get("data"), block.get("base64"))
        (tool_message,) = [m for m in later["messages"] if m["type"] == "tool"]
        assert PNG_B64 not in json.dumps(tool_message)
        assert "base64" not in tool_message["content"]
        assert json.dumps(later).count(PNG_B64) == 1
    state = await graph.aget_state(config)
    assert json.dumps([m.model_dump() for m in state.values["messages"]]).count(PNG_B64) == 1
