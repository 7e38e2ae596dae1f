"""The runtime on a real create_agent graph with the scripted model."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.contract.errors import RunBusyError
from gth_jupyter.contract.events import TextEvent, ToolResultEvent, ToolStartEvent
from gth_jupyter.contract.resume import ClientToolAnswer, Resume
from gth_jupyter.contract.run import ClientToolSpec, RunEnd, RunPlan
from gth_jupyter.models import FakeChatModel

CAMERA = ClientToolSpec("capture_image", "webcam")
ASK = ClientToolSpec("ask_user", "ask", {"type": "object", "properties": {"q": {"type": "string"}}})


async def collect(runtime: Runtime, plan: RunPlan) -> list[object]:
    return [item async for item in runtime.stream(plan)]


async def test_fresh_run_streams_text_and_ends_without_pending(make_runtime) -> None:
    runtime = make_runtime(["Hello there"])
    items = await collect(runtime, RunPlan("t", messages=[HumanMessage("hi", id="u1")]))
    assert "".join(i.delta for i in items if isinstance(i, TextEvent)) == "Hello there"
    assert items[-1] == RunEnd([])
    state = await runtime.thread_state("t")
    assert [type(m) for m in state.messages] == [HumanMessage, AIMessage]


async def test_server_tool_round_gives_a_result_then_the_answer(make_runtime) -> None:
    runtime = make_runtime([{"toolCalls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, "5"])
    items = await collect(runtime, RunPlan("t", messages=[HumanMessage("2+3?")]))
    results = [i for i in items if isinstance(i, ToolResultEvent)]
    assert [r.content for r in results] == ["5"]


async def test_two_client_tools_in_one_turn_suspend_together_and_resume_with_one_command(
    make_runtime,
) -> None:
    runtime = make_runtime(
        [
            {"toolCalls": [{"name": "capture_image"}, {"name": "ask_user", "args": {"q": "ok?"}}]},
            "Thanks for both.",
        ]
    )
    plan = RunPlan("t", messages=[HumanMessage("go")], client_tools=[CAMERA, ASK])
    items = await collect(runtime, plan)
    end = items[-1]
    assert isinstance(end, RunEnd)
    assert [p.tool_name for p in end.pending] == ["capture_image", "ask_user"]
    assert all(p.client_tool for p in end.pending)
    assert not any(isinstance(i, ToolResultEvent) for i in items)
    state = await runtime.thread_state("t")
    assert len(state.pending) == 2

    resume = Resume(
        {
            p.id: ClientToolAnswer(payload={"n": i}).to_resume_value()
            for i, p in enumerate(end.pending)
        }
    )
    items = await collect(runtime, RunPlan("t", resume=resume, client_tools=[CAMERA, ASK]))
    assert items[-1] == RunEnd([])
    state = await runtime.thread_state("t")
    tool_messages = [m for m in state.messages if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_messages] == ['{"n": 0}', '{"n": 1}']
    assert state.messages[-1].content == "Thanks for both."
    model = runtime.model
    assert isinstance(model, FakeChatModel)
    assert any(isinstance(m, ToolMessage) for m in model.received[-1])


async def test_a_new_message_abandons_pending_client_calls(make_runtime) -> None:
    runtime = make_runtime([{"toolCalls": [{"name": "capture_image"}]}, "Sure, something else."])
    end = (await collect(runtime, RunPlan("t", [HumanMessage("photo")], client_tools=[CAMERA])))[-1]
    assert isinstance(end, RunEnd) and end.pending
    plan = RunPlan("t", messages=[HumanMessage("never mind")], abandon=end.pending)
    items = await collect(runtime, plan)
    assert items[-1] == RunEnd([])
    state = await runtime.thread_state("t")
    assert not state.pending
    abandoned = [m for m in state.messages if isinstance(m, ToolMessage)]
    assert abandoned and abandoned[0].status == "error"


async def test_claim_refuses_a_second_run_on_the_same_thread(make_runtime) -> None:
    runtime = make_runtime([])
    claim = await runtime.claim("t")
    with pytest.raises(RunBusyError) as info:
        await runtime.claim("t")
    assert info.value.code == "run_busy"
    (await runtime.claim("other")).release()
    claim.release()
    (await runtime.claim("t")).release()


async def test_cancelled_run_leaves_the_thread_usable(make_runtime) -> None:
    runtime = make_runtime([{"content": "word " * 200, "delayMs": 5}, "Second answer."])

    streaming = asyncio.Event()

    async def consume() -> None:
        async for item in runtime.stream(RunPlan("t", [HumanMessage("long", id="u1")])):
            if isinstance(item, TextEvent):
                streaming.set()

    task = asyncio.create_task(consume())
    # Cancelled mid-answer: once the model has begun (on a loaded machine a fixed wait could
    # cancel the run before its model call, leaving the first answer in the script).
    await asyncio.wait_for(streaming.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    items = await collect(runtime, RunPlan("t", [HumanMessage("again", id="u2")]))
    assert "".join(i.delta for i in items if isinstance(i, TextEvent)) == "Second answer."
    state = await runtime.thread_state("t")
    assert [m.id for m in state.messages if isinstance(m, HumanMessage)] == ["u1", "u2"]


async def test_client_tool_replaces_a_server_tool_of_the_same_name(make_runtime) -> None:
    runtime = make_runtime([{"toolCalls": [{"name": "add", "args": {"a": 1, "b": 1}}]}])
    override = ClientToolSpec("add", "browser add")
    items = await collect(runtime, RunPlan("t", [HumanMessage("1+1")], client_tools=[override]))
    end = items[-1]
    assert isinstance(end, RunEnd) and [p.tool_name for p in end.pending] == ["add"]
    assert any(isinstance(i, ToolStartEvent) and i.name == "add" for i in items)
