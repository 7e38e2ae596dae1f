"""Issue 8, item 8: a tool message for a call nobody made must not cancel a waiting client tool.

Repro: a thread waits for ``capture_image``; a request whose trailing tool message names an
unknown ``toolCallId`` got 200 and closed the wait as "the user sent a new message instead".
"""

from __future__ import annotations

import json

import pytest

from gth_jupyter.agui.errors import ProtocolError
from tests.agui.test_run_flow import suspended_on_camera, user
from tests.conftest import CAMERA_TOOL, body, of_type, run_events, text_of


async def test_a_stray_tool_message_is_409_and_the_wait_is_intact(make_runtime) -> None:
    runtime, history, _, call_id = await suspended_on_camera(make_runtime, ["I see you."])
    stray = {"id": "t-stray", "role": "tool", "toolCallId": "call-nobody-made", "content": "x"}
    with pytest.raises(ProtocolError) as info:
        await run_events(runtime, body("t", "r2", [*history, stray], tools=[CAMERA_TOOL]))
    assert info.value.status == 409 and info.value.code == "interrupt_mismatch"
    assert "call-nobody-made" in info.value.message
    assert info.value.detail["pending"][0]["toolCallId"] == call_id

    state = await runtime.thread_state("t")
    assert [p.tool_call_id for p in state.pending] == [call_id]
    assert not runtime.is_busy("t")

    # The real answer still resumes the call it was waiting for.
    frame = json.dumps({"mimeType": "image/jpeg", "data": "QQ=="})
    answer = {"id": "t-real", "role": "tool", "toolCallId": call_id, "content": frame}
    events = await run_events(runtime, body("t", "r3", [*history, answer], tools=[CAMERA_TOOL]))
    assert text_of(events) == "I see you."
    assert of_type(events, "RUN_FINISHED")[0].get("outcome", {}).get("type") != "interrupt"


async def test_a_new_user_message_still_moves_on_from_the_wait(make_runtime) -> None:
    runtime, history, _, _ = await suspended_on_camera(make_runtime, ["Something else, then."])
    events = await run_events(
        runtime, body("t", "r2", [*history, user("u2", "never mind")], tools=[CAMERA_TOOL])
    )
    assert text_of(events) == "Something else, then."
    assert not (await runtime.thread_state("t")).pending
