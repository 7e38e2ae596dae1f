"""``RUN_FINISHED.usage`` on every kind of run end, and the 0.x dialect without it."""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunErrorEvent, RunFinishedEvent

from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.models.demo import DemoChatModel
from tests.conftest import CAMERA_TOOL, body, of_type, run_events

COUNTED = {"inputTokens": 70, "outputTokens": 7, "reasoningTokens": 3, "cacheWriteInputTokens": 9}


def usage_of(event: dict[str, Any]) -> dict[str, Any]:
    (usage,) = event["usage"]
    return usage


async def test_a_run_that_waits_on_a_client_tool_reports_its_call(make_runtime: Any) -> None:
    runtime = make_runtime([{"toolCalls": [{"name": "capture_image"}], "usage": COUNTED}])
    events = await run_events(runtime, body("t", "r1", "photo", tools=[CAMERA_TOOL]))
    (finished,) = of_type(events, "RUN_FINISHED")
    assert finished["outcome"]["pendingToolCallIds"]
    usage = usage_of(finished)
    assert {k: usage[k] for k in COUNTED} == COUNTED
    assert usage["totalTokens"] == 77
    # Valid for ag-ui-protocol as the client reads it.
    assert RunFinishedEvent.model_validate(finished).usage


async def test_a_scripted_call_without_counts_estimates_them(make_runtime: Any) -> None:
    runtime = make_runtime(["A short answer of a few words."])
    events = await run_events(runtime, body("t", "r1", "hi"))
    usage = usage_of(events[-1])
    assert usage["inputTokens"] >= 1 and usage["outputTokens"] == 8  # 30 characters / 4


async def test_a_0x_client_gets_neither_usage_nor_metadata(make_runtime: Any) -> None:
    runtime = make_runtime(["One."])
    events = await run_events(runtime, body("t", "r1", "hi", protocolVersion=None), "0.x")
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert "usage" not in finished and "metadata" not in finished


async def test_a_0x_client_gets_a_run_error_without_usage(make_runtime: Any) -> None:
    runtime = make_runtime(
        [{"toolCalls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, {"error": "gone"}]
    )
    new = await run_events(runtime, body("t", "r1", "hi"))
    assert new[-1]["type"] == "RUN_ERROR" and new[-1]["usage"]
    RunErrorEvent.model_validate(new[-1])
    runtime = make_runtime(
        [{"toolCalls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, {"error": "gone"}]
    )
    old = await run_events(runtime, body("t", "r1", "hi"), "0.x")
    assert old[-1]["type"] == "RUN_ERROR" and "usage" not in old[-1]


async def test_the_demo_model_reports_usage_and_costs_nothing() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    runtime = Runtime(DemoChatModel(), [], checkpointer=InMemorySaver())
    events = await run_events(runtime, body("t", "r1", "hello"))
    finished = events[-1]
    usage = usage_of(finished)
    assert usage["provider"] == "demo" and usage["inputTokens"] > 0
    assert finished["metadata"]["gth"]["cost"] == {"usd": 0.0, "source": "offline"}
