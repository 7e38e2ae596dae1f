"""Shared state and A2UI activity as AG-UI 1.0 events, and in a thread's history."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from gth_jupyter.agui.history import thread_view
from gth_jupyter.agui.mapping import EventMapper
from gth_jupyter.contract.events import TextEvent
from gth_jupyter.contract.run import RunPlan
from gth_jupyter.contract.shared_state import StateDelta, StateSnapshot
from gth_jupyter.contract.surfaces import ActivityDelta, ActivitySnapshot
from gth_jupyter.tools.a2ui import make_a2ui_tool
from gth_jupyter.tools.state import make_state_tool
from tests.conftest import body, of_type, run_events

S1 = (
    '{"surfaceUpdate":{"surfaceId":"s1","components":[{"id":"root","component":'
    '{"Text":{"text":{"literalString":"hi"}}}}]}}\n'
    '{"beginRendering":{"surfaceId":"s1","root":"root"}}'
)
S1_DATA = '{"dataModelUpdate":{"surfaceId":"s1","contents":[]}}'


def dump(events: Any) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in events]


def test_state_and_activity_items_map_to_their_events() -> None:
    mapper = EventMapper("t", "r")
    patch = [{"op": "add", "path": "/a", "value": 1}]
    assert dump(mapper.map(StateSnapshot({"a": 0}))) == [
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": 0}}
    ]
    assert dump(mapper.map(StateDelta(patch))) == [{"type": "STATE_DELTA", "delta": patch}]
    # An open text message is closed before an activity, as before a tool call.
    list(mapper.map(TextEvent(delta="hi")))
    snap = dump(mapper.map(ActivitySnapshot("m1", "a2ui-surface", {"a2ui_operations": []})))
    assert [e["type"] for e in snap] == ["TEXT_MESSAGE_END", "ACTIVITY_SNAPSHOT"]
    assert snap[1] == {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": "m1",
        "activityType": "a2ui-surface",
        "content": {"a2ui_operations": []},
    }
    assert dump(mapper.map(ActivityDelta("m1", "a2ui-surface", patch))) == [
        {
            "type": "ACTIVITY_DELTA",
            "messageId": "m1",
            "activityType": "a2ui-surface",
            "patch": patch,
        }
    ]


async def test_a_plain_run_has_no_state_events(make_runtime) -> None:
    runtime = make_runtime(["Hello"])
    events = await run_events(
        runtime, body("t", "r", [{"id": "u", "role": "user", "content": "x"}])
    )
    assert not of_type(events, "STATE_SNAPSHOT") and not of_type(events, "STATE_DELTA")


async def test_state_events_follow_run_started_and_precede_run_finished(make_runtime) -> None:
    script = [{"toolCalls": [{"name": "gth_update_state", "args": {"state": {"n": 2}}}]}, "ok"]
    runtime = make_runtime(script, [make_state_tool()])
    events = await run_events(
        runtime, body("t", "r", [{"id": "u", "role": "user", "content": "x"}])
    )
    types = [e["type"] for e in events]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    # The answer's message ends before the closing snapshot, which is the last thing before finish.
    assert types[-3:-1] == ["TEXT_MESSAGE_END", "STATE_SNAPSHOT"]
    assert of_type(events, "STATE_DELTA") == [
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 2}]}
    ]
    assert events[-2]["snapshot"] == {"n": 2}


async def test_history_holds_each_surface_once_after_its_first_tool_message(make_runtime) -> None:
    show = [{"name": "show_a2ui_surface", "args": {"surfaceJsonl": S1}}]
    again = [{"name": "show_a2ui_surface", "args": {"surfaceJsonl": S1_DATA}}]
    runtime = make_runtime(
        [{"toolCalls": show}, "shown", {"toolCalls": again}, "updated"], [make_a2ui_tool()]
    )
    for text in ("form", "update"):
        async for _ in runtime.stream(RunPlan("t", messages=[HumanMessage(text)])):
            pass
    view = await thread_view(runtime, "t")
    roles = [m["role"] for m in view["messages"]]
    assert roles == [
        "user", "assistant", "tool", "activity", "assistant",
        "user", "assistant", "tool", "assistant",
    ]  # fmt: skip
    activity = view["messages"][3]
    assert activity["id"] == f"{view['messages'][2]['toolCallId']}-a2ui-s1"
    assert activity["activityType"] == "a2ui-surface"
    assert len(activity["content"]["a2ui_operations"]) == 3
    assert "state" not in view


async def test_history_gives_the_threads_state(make_runtime) -> None:
    runtime = make_runtime(["ok"])
    async for _ in runtime.stream(RunPlan("t", messages=[HumanMessage("x")], state={"a": 1})):
        pass
    assert (await thread_view(runtime, "t"))["state"] == {"a": 1}
