"""Shared state and A2UI activity in the runtime: the state channel, its stream items, surfaces."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage

from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.contract.run import RunEnd, RunPlan
from gth_jupyter.contract.shared_state import (
    REPLACE_STATE,
    StateDelta,
    StateSnapshot,
    json_patch,
    merge_state,
)
from gth_jupyter.contract.surfaces import (
    ActivityDelta,
    ActivitySnapshot,
    SurfaceTracker,
    thread_activities,
)
from gth_jupyter.models import FakeChatModel
from gth_jupyter.tools.a2ui import make_a2ui_tool
from gth_jupyter.tools.state import make_state_tool

RECIPE = {"recipe": {"title": "Soup", "servings": 2, "ingredients": ["leek"]}}
S1 = (
    '{"surfaceUpdate":{"surfaceId":"s1","components":[{"id":"root","component":'
    '{"Text":{"text":{"literalString":"hi"}}}}]}}\n'
    '{"beginRendering":{"surfaceId":"s1","root":"root"}}'
)
S1_DATA = '{"dataModelUpdate":{"surfaceId":"s1","contents":[]}}'


def update(state: dict[str, Any]) -> dict[str, Any]:
    return {"toolCalls": [{"name": "gth_update_state", "args": {"state": state}}]}


def show(jsonl: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "show_a2ui_surface", "args": {"surfaceJsonl": jsonl}}]}


def runtime(make_runtime, responses: list[Any]) -> Runtime:
    rt: Runtime = make_runtime(responses, [make_state_tool(), make_a2ui_tool()])
    return rt


async def collect(rt: Runtime, plan: RunPlan) -> list[object]:
    return [item async for item in rt.stream(plan)]


def of(items: list[object], kind: type) -> list[Any]:
    return [i for i in items if isinstance(i, kind)]


# -- merge and patch ----------------------------------------------------------------------------


def test_merge_state_is_a_json_merge_patch_and_a_replacement_replaces() -> None:
    old = {"a": {"b": 1, "c": 2}, "d": [1], "e": 1}
    assert merge_state(old, {"a": {"b": 3}, "d": [2], "e": None}) == {
        "a": {"b": 3, "c": 2},
        "d": [2],
    }
    assert merge_state(old, {REPLACE_STATE: {"x": 1}}) == {"x": 1}
    assert merge_state(None, {"x": 1}) == {"x": 1}
    assert old == {"a": {"b": 1, "c": 2}, "d": [1], "e": 1}  # never changed in place


def test_json_patch_turns_old_into_new() -> None:
    assert json_patch({"a": 1}, {"a": 1}) == []
    assert json_patch({"a": 1, "b": 2}, {"a": 3, "c/d": 4}) == [
        {"op": "remove", "path": "/b"},
        {"op": "replace", "path": "/a", "value": 3},
        {"op": "add", "path": "/c~1d", "value": 4},
    ]
    assert json_patch({"l": [1]}, {"l": [1, 2]}) == [{"op": "add", "path": "/l/-", "value": 2}]
    assert json_patch({"l": [1, 2]}, {"l": [2]}) == [{"op": "replace", "path": "/l", "value": [2]}]


# -- the runtime --------------------------------------------------------------------------------


async def test_a_plain_run_streams_no_state(make_runtime) -> None:
    rt = runtime(make_runtime, ["Hello"])
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("hi")]))
    assert not of(items, StateSnapshot) and not of(items, StateDelta)
    assert (await rt.thread_state("t")).state == {}


async def test_client_state_is_stored_changed_by_the_tool_and_snapshotted_at_both_ends(
    make_runtime,
) -> None:
    rt = runtime(make_runtime, [update({"recipe": {"servings": 4}}), "Four servings now."])
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("for 4")], state=RECIPE))
    assert items[0] == StateSnapshot(RECIPE)
    assert of(items, StateDelta) == [
        StateDelta([{"op": "replace", "path": "/recipe/servings", "value": 4}])
    ]
    changed = {"recipe": {**RECIPE["recipe"], "servings": 4}}
    assert items[-2:] == [StateSnapshot(changed), RunEnd([])]
    assert (await rt.thread_state("t")).state == changed
    # The model saw the state in its system prompt.
    model = rt.model
    assert isinstance(model, FakeChatModel)
    first = model.received[0][0]
    assert isinstance(first, SystemMessage) and '"servings": 2' in str(first.content)


async def test_an_empty_state_keeps_the_threads_and_a_sent_one_replaces_it(make_runtime) -> None:
    rt = runtime(make_runtime, ["one", "two", "three"])
    await collect(rt, RunPlan("t", messages=[HumanMessage("a")], state=RECIPE))
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("b")], state={}))
    assert items[0] == StateSnapshot(RECIPE)
    assert (await rt.thread_state("t")).state == RECIPE
    await collect(rt, RunPlan("t", messages=[HumanMessage("c")], state={"other": 1}))
    assert (await rt.thread_state("t")).state == {"other": 1}


async def test_a_tool_may_set_state_on_a_thread_without_any(make_runtime) -> None:
    rt = runtime(make_runtime, [update({"n": 1}), "ok"])
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("go")]))
    assert not isinstance(items[0], StateSnapshot)
    assert of(items, StateDelta) == [StateDelta([{"op": "add", "path": "/n", "value": 1}])]
    assert items[-2] == StateSnapshot({"n": 1})


async def test_two_parallel_updates_both_land(make_runtime) -> None:
    both = {
        "toolCalls": [
            {"name": "gth_update_state", "args": {"state": {"a": 1}}},
            {"name": "gth_update_state", "args": {"state": {"b": 2}}},
        ]
    }
    rt = runtime(make_runtime, [both, "ok"])
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("go")]))
    assert (await rt.thread_state("t")).state == {"a": 1, "b": 2}
    assert items[-2] == StateSnapshot({"a": 1, "b": 2})


async def test_a_surface_is_an_activity_snapshot_then_deltas_across_runs(make_runtime) -> None:
    rt = runtime(make_runtime, [show(S1), "shown", show(S1_DATA), "updated"])
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("form")]))
    [snap] = of(items, ActivitySnapshot)
    assert snap.activity_type == "a2ui-surface" and snap.message_id.endswith("-a2ui-s1")
    assert [next(iter(op)) for op in snap.content["a2ui_operations"]] == [
        "surfaceUpdate",
        "beginRendering",
    ]
    items = await collect(rt, RunPlan("t", messages=[HumanMessage("update it")]))
    assert not of(items, ActivitySnapshot)
    [delta] = of(items, ActivityDelta)
    assert delta.message_id == snap.message_id
    assert delta.patch == [
        {
            "op": "add",
            "path": "/a2ui_operations/-",
            "value": {"dataModelUpdate": {"surfaceId": "s1", "contents": []}},
        }
    ]
    messages = (await rt.thread_state("t")).messages
    [(after, [activity])] = thread_activities(messages).items()
    first_show = next(m for m in messages if isinstance(m, ToolMessage))
    assert after == first_show.id
    assert activity.message_id == snap.message_id
    assert len(activity.content["a2ui_operations"]) == 3


def test_an_invalid_or_failed_surface_is_no_activity() -> None:
    tracker = SurfaceTracker()
    assert tracker.show("c1", "not json") == []
    failed = ToolMessage(S1, tool_call_id="c2", name="show_a2ui_surface", status="error")
    assert tracker.show_message(failed) == []
    other = ToolMessage(S1, tool_call_id="c3", name="other_tool")
    assert tracker.show_message(other) == []
