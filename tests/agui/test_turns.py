"""Widget turns: each %gth cell's messages are tagged, so a page can show one cell's turn."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.agui import thread_view
from gth_jupyter.agui.errors import ProtocolError
from tests.conftest import CAMERA_TOOL, run_events
from tests.conftest import body as raw_body


def body(thread_id: str, run_id: str, messages: list[dict[str, Any]], **extra: Any) -> bytes:
    """A request as ``@ag-ui/client`` 1.0 sends it (``protocolVersion: "1.0"``)."""
    return raw_body(thread_id, run_id, messages, protocolVersion="1.0", **extra)


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text}


def turn(turn_id: str) -> dict[str, Any]:
    return {"forwardedProps": {"gth": {"turnId": turn_id}}}


def texts(view: dict[str, Any]) -> list[str]:
    return [m.get("content", "") for m in view["messages"]]


async def test_each_turn_shows_alone_and_the_thread_shows_all(make_runtime) -> None:
    runtime = make_runtime(["One.", "From the chat.", "Two."])
    await run_events(runtime, body("t", "r1", [user("u1", "first")], **turn("cell-1")))
    await run_events(runtime, body("t", "r2", [user("u2", "chat")]))  # %gth alone: no turn
    await run_events(runtime, body("t", "r3", [user("u3", "second")], **turn("cell-2")))

    assert texts(await thread_view(runtime, "t", "cell-1")) == ["first", "One."]
    assert texts(await thread_view(runtime, "t", "cell-2")) == ["second", "Two."]
    whole = await thread_view(runtime, "t")
    assert texts(whole) == ["first", "One.", "chat", "From the chat.", "second", "Two."]
    # A turn its client named none for (``%gth`` alone) is named by its run.
    assert [(t["turnId"], t["runId"], t["done"]) for t in whole["turns"]] == [
        ("cell-1", "r1", True),
        (None, "r2", True),
        ("cell-2", "r3", True),
    ]
    assert texts(await thread_view(runtime, "t", "never-sent")) == []


async def test_follow_ups_typed_into_a_cell_stay_in_its_turn(make_runtime) -> None:
    runtime = make_runtime(["One.", "More."])
    history = [user("u1", "first")]
    await run_events(runtime, body("t", "r1", history, **turn("cell-1")))
    view = await thread_view(runtime, "t", "cell-1")
    await run_events(
        runtime, body("t", "r2", [*view["messages"], user("u2", "and?")], **turn("cell-1"))
    )
    assert texts(await thread_view(runtime, "t", "cell-1")) == ["first", "One.", "and?", "More."]
    assert [t["turnId"] for t in (await thread_view(runtime, "t"))["turns"]] == [
        "cell-1",
        "cell-1",
    ]


async def test_a_turn_waiting_on_a_client_tool_is_not_done_and_keeps_its_wait(
    make_runtime,
) -> None:
    runtime = make_runtime(["One.", {"toolCalls": [{"name": "capture_image"}]}, "I see you."])
    await run_events(runtime, body("t", "r1", [user("u1", "hi")], **turn("cell-1")))
    await run_events(
        runtime,
        body("t", "r2", [user("u2", "photo")], tools=[CAMERA_TOOL], **turn("cell-2")),
    )
    whole = await thread_view(runtime, "t")
    assert [(t["turnId"], t["done"]) for t in whole["turns"]] == [
        ("cell-1", True),
        ("cell-2", False),
    ]
    mine = await thread_view(runtime, "t", "cell-2")
    other = await thread_view(runtime, "t", "cell-1")
    assert len(mine["pendingToolCallIds"]) == 1 and mine["interrupts"]
    assert other["pendingToolCallIds"] == [] and other["interrupts"] == []


@pytest.mark.parametrize("bad", [5, "", "x" * 600, {"id": "x"}])
async def test_a_malformed_turn_id_is_422(make_runtime, bad: Any) -> None:
    runtime = make_runtime(["never"])
    with pytest.raises(ProtocolError) as info:
        await run_events(runtime, body("t", "r1", [user("u1", "hi")], **turn(bad)))
    assert info.value.status == 422 and info.value.code == "invalid_input"
    assert info.value.detail["errors"][0]["path"] == "forwardedProps.gth.turnId"
    assert not runtime.is_busy("t")
