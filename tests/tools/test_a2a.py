"""``a2a_agent_<agentId>`` against a real ``a2a-sdk`` agent on loopback (``a2a_agent.py``): the
tools alone, and run by a real agent whose scripted model calls them across turns."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("a2a.server.routes")
pytest.importorskip("uvicorn")

from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.config.schema import A2aAgentConfig
from gth_jupyter.contract.events import ToolResultEvent
from gth_jupyter.contract.run import RunEnd, RunPlan
from gth_jupyter.store import CheckpointStore
from gth_jupyter.tools.a2a import Conversations, cap_reply, make_a2a_tools
from gth_jupyter.tools.kinds import kind_of
from tests.helpers import free_port
from tests.tools.a2a_agent import Memory, serve


@pytest.fixture(scope="module")
def remote() -> Iterator[tuple[str, Memory]]:
    with serve() as served:
        yield served


def tools_for(url: str, agent_id: str = "helper", **kwargs: Any) -> list[BaseTool]:
    config = A2aAgentConfig.model_validate({"agentId": agent_id, "agentUrl": url})
    return make_a2a_tools({"key": config}, **kwargs)


async def ask(tool: BaseTool, message: str, thread: str | None = None) -> tuple[str, bool]:
    """The tool's answer and whether it was an error, as a graph's tool node would see them."""
    runtime = (
        None if thread is None else SimpleNamespace(config={"configurable": {"thread_id": thread}})
    )
    result = await tool.ainvoke(
        {
            "type": "tool_call",
            "name": tool.name,
            "id": "c1",
            "args": {"message": message, "runtime": runtime},
        }
    )
    return str(result.content), result.status == "error"


async def test_one_tool_per_agent_named_by_agent_id(remote: tuple[str, Memory]) -> None:
    (tool,) = tools_for(remote[0], "Research_1")
    assert tool.name == "a2a_agent_Research_1"
    assert kind_of(tool) == "network"
    assert (tool.metadata or {})["a2a_url"] == remote[0].rstrip("/")
    assert set(tool.get_input_schema().model_json_schema()["properties"]) >= {"message"}
    assert "runtime" not in tool.tool_call_schema.model_json_schema()["properties"]
    with pytest.raises(ValueError, match="agentId"):
        make_a2a_tools(
            {
                "a": A2aAgentConfig.model_validate({"agentId": "x", "agentUrl": remote[0]}),
                "b": A2aAgentConfig.model_validate({"agentId": "x", "agentUrl": remote[0]}),
            }
        )


async def test_message_gets_the_reply_and_the_context_continues_per_thread(
    remote: tuple[str, Memory],
) -> None:
    conversations = Conversations()
    (tool,) = tools_for(remote[0], conversations=conversations)
    assert await ask(tool, "hello", "t1") == ("turn 1 in context: hello", False)
    assert await ask(tool, "again", "t1") == ("turn 2 in context: again", False)
    assert await ask(tool, "other thread", "t2") == ("turn 1 in context: other thread", False)
    assert await ask(tool, "no thread") == ("turn 1 in context: no thread", False)
    assert await ask(tool, "no thread") == ("turn 1 in context: no thread", False)
    assert await ask(tool, "third", "t1") == ("turn 3 in context: third", False)
    assert len(conversations) == 2


async def test_conversations_are_bounded_least_recently_used_first(
    remote: tuple[str, Memory],
) -> None:
    conversations = Conversations(limit=2)
    (tool,) = tools_for(remote[0], conversations=conversations)
    await ask(tool, "a", "t1")
    await ask(tool, "b", "t2")
    await ask(tool, "a again", "t1")  # t1 is now the most recent
    await ask(tool, "c", "t3")  # t2 is dropped
    assert len(conversations) == 2
    assert (await ask(tool, "a third", "t1"))[0] == "turn 3 in context: a third"
    assert (await ask(tool, "b again", "t2"))[0] == "turn 1 in context: b again"


async def test_input_required_surfaces_the_question_and_the_answer_continues_the_task(
    remote: tuple[str, Memory],
) -> None:
    (tool,) = tools_for(remote[0])
    text, error = await ask(tool, "book a table", "t1")
    assert not error
    assert "needs more input" in text and "Which date?" in text and "again with the answer" in text
    assert await ask(tool, "Friday", "t1") == ("Booked for Friday.", False)
    # the task is done: the next message starts a new task in the same context
    assert await ask(tool, "thanks", "t1") == ("turn 3 in context: thanks", False)


async def test_timeout_is_an_error_message(remote: tuple[str, Memory]) -> None:
    # 2 s: long enough for the next request to be answered on a loaded machine, far short of
    # the remote's 60 s sleep.
    (tool,) = tools_for(remote[0], timeout=2.0)
    started = time.monotonic()
    text, error = await ask(tool, "sleep", "t1")
    assert error
    assert text == "Error communicating with agent: no reply within 2 seconds"
    assert time.monotonic() - started < 10
    assert (await ask(tool, "awake?", "t1"))[0].startswith("turn ")  # the tool still works


async def test_a_long_reply_is_capped_head_and_tail(remote: tuple[str, Memory]) -> None:
    (tool,) = tools_for(remote[0])
    text, error = await ask(tool, "long", "t1")
    assert not error
    assert len(text) < 20_200
    assert text.startswith("A" * 100) and text.endswith("Z" * 100)
    assert "30000 characters of the agent's reply left out" in text
    assert cap_reply("short") == "short"


async def test_a_failing_agent_is_an_error_message(remote: tuple[str, Memory]) -> None:
    (tool,) = tools_for(remote[0])
    text, error = await ask(tool, "fail", "t1")
    assert text == "Error communicating with agent: the test agent failed on purpose"
    assert error


async def test_an_unreachable_agent_is_an_error_message(tmp_path: Path) -> None:
    (tool,) = tools_for(f"http://127.0.0.1:{free_port()}/", timeout=5)
    text, error = await ask(tool, "hello", "t1")
    assert error and text.startswith("Error communicating with agent: ")
    assert "agent-card.json" in text


async def test_a_card_naming_another_host_is_refused() -> None:
    with serve(card_url="http://localhost:1/elsewhere") as (url, memory):
        (tool,) = tools_for(url)
        text, error = await ask(tool, "hello", "t1")
    assert error
    assert text.startswith("Error communicating with agent: the agent card at")
    assert "http://localhost:1/elsewhere" in text and "refused" in text
    assert memory.turns == {}  # nothing was sent anywhere


async def test_streaming_agents_reply_too() -> None:
    with serve(streaming=True) as (url, _):
        (tool,) = tools_for(url)
        assert await ask(tool, "hi", "t1") == ("turn 1 in context: hi", False)
        assert await ask(tool, "hi", "t1") == ("turn 2 in context: hi", False)


async def test_a_card_redirect_is_not_followed(remote: tuple[str, Memory]) -> None:
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Route

    from tests.tools.a2a_agent import serve_app

    target = remote[0] + ".well-known/agent-card.json"
    app = Starlette(
        routes=[Route("/.well-known/agent-card.json", lambda _: RedirectResponse(target))]
    )
    with serve_app(app) as url:
        (tool,) = tools_for(url)
        text, error = await ask(tool, "hello", "t1")
    assert error and text.startswith("Error communicating with agent: Failed to fetch agent card")
    assert "307" in text


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_v0_3_agent_is_reached_through_the_compat_transport(streaming: bool) -> None:
    with serve(legacy=True, streaming=streaming) as (url, _):
        (tool,) = tools_for(url)
        assert await ask(tool, "hi", "t1") == ("turn 1 in context: hi", False)
        assert "needs more input" in (await ask(tool, "book", "t1"))[0]
        assert await ask(tool, "Sunday", "t1") == ("Booked for Sunday.", False)


# --- through a real agent -------------------------------------------------------------------


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": name, "args": args, "id": call_id}]}


async def run(registry: AgentRegistry, plan: RunPlan) -> tuple[list[ToolResultEvent], RunEnd]:
    runtime = await registry.runtime()
    items = [item async for item in runtime.stream(plan)]
    end = items[-1]
    assert isinstance(end, RunEnd)
    return [i for i in items if isinstance(i, ToolResultEvent)], end


async def test_a_real_agent_talks_to_the_remote_agent_across_turns(
    tmp_path: Path, remote: tuple[str, Memory]
) -> None:
    url, _ = remote
    tool = "a2a_agent_helper"
    responses = [
        call(tool, {"message": "book a room"}, "c1"),
        "It asks which date.",
        call(tool, {"message": "Monday"}, "c2"),
        "Booked.",
        call(tool, {"message": "summary please"}, "c3"),
        "Done.",
        call(tool, {"message": "hello"}, "c4"),
        "Other thread.",
        call(tool, {"message": "sleep"}, "c5"),
        "It timed out.",
    ]
    settings = {
        "llm": {"type": "fake", "responses": responses},
        "approvals": {"mode": "bypass"},
    }
    registry = AgentRegistry(
        GthConfig.model_validate(settings),
        command="notebook",
        store=CheckpointStore("memory"),
        cwd=tmp_path,
        tools=tools_for(url, timeout=1),
        kernels=False,
    )
    assert registry.build_error is None, registry.build_error

    (asked,), end = await run(registry, RunPlan("thread-a", [HumanMessage("book")]))
    assert end.pending == [] and not asked.is_error
    assert "Which date?" in asked.content
    (booked,), _ = await run(registry, RunPlan("thread-a", [HumanMessage("Monday")]))
    assert booked.content == "Booked for Monday."
    (summary,), _ = await run(registry, RunPlan("thread-a", [HumanMessage("and?")]))
    assert summary.content == "turn 3 in context: summary please"
    (fresh,), _ = await run(registry, RunPlan("thread-b", [HumanMessage("hi")]))
    assert fresh.content == "turn 1 in context: hello"
    (slow,), end = await run(registry, RunPlan("thread-b", [HumanMessage("wait")]))
    assert (
        slow.is_error
        and slow.content == "Error communicating with agent: no reply within 1 seconds"
    )
    assert end.pending == []


async def test_a2a_agents_in_the_configuration_become_the_agents_tools(
    tmp_path: Path, remote: tuple[str, Memory]
) -> None:
    """The resolver builds the tools from ``a2aAgents`` itself (no tools handed in)."""
    url, _ = remote
    settings = {
        "llm": {
            "type": "fake",
            "responses": [call("a2a_agent_helper", {"message": "hi"}, "c1"), "ok"],
        },
        "approvals": {"mode": "bypass"},
        "a2aAgents": {"helper": {"agentId": "helper", "agentUrl": url}},
    }
    registry = AgentRegistry(
        GthConfig.model_validate(settings),
        command="notebook",
        store=CheckpointStore("memory"),
        cwd=tmp_path,
    )
    assert registry.build_error is None, registry.build_error
    assert "a2a_agent_helper" in registry.info()["agents"][0]["tools"]
    (reply,), _ = await run(registry, RunPlan("thread-c", [HumanMessage("hi")]))
    assert reply.content == "turn 1 in context: hi" and not reply.is_error
