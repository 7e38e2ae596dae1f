"""Whole AG-UI runs through the planning, runtime and mapping layers (no HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage

from gth_jupyter.agui.errors import ProtocolError
from gth_jupyter.models import FakeChatModel
from tests.conftest import ASK_TOOL, CAMERA_TOOL, of_type, run_events, text_of
from tests.conftest import body as raw_body


def body(thread_id: str, run_id: str, messages: list[dict[str, Any]], **extra: Any) -> bytes:
    """A request as ``@ag-ui/client`` 1.0 sends it (``protocolVersion: "1.0"``)."""
    return raw_body(thread_id, run_id, messages, protocolVersion="1.0", **extra)


def check_well_formed(events: list[dict[str, Any]]) -> None:
    """The official client's ordering rules that matter here."""
    assert events[0]["type"] == "RUN_STARTED" and events[0]["protocolVersion"] == "1.0"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    open_text: set[str] = set()
    open_calls: set[str] = set()
    for e in events:
        assert None not in e.values()
        kind = e["type"]
        if kind == "TEXT_MESSAGE_START":
            open_text.add(e["messageId"])
        elif kind == "TEXT_MESSAGE_CONTENT":
            assert e["messageId"] in open_text
        elif kind == "TEXT_MESSAGE_END":
            open_text.remove(e["messageId"])
        elif kind == "TOOL_CALL_START":
            assert not open_text, "text must be closed before a tool call starts"
            open_calls.add(e["toolCallId"])
        elif kind == "TOOL_CALL_ARGS":
            assert e["toolCallId"] in open_calls
        elif kind == "TOOL_CALL_END":
            open_calls.remove(e["toolCallId"])
        elif kind in ("RUN_FINISHED", "RUN_ERROR"):
            assert not open_text and not open_calls


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text}


async def suspended_on_camera(make_runtime, responses: list[Any]):
    runtime = make_runtime(
        [{"content": "Smile!", "toolCalls": [{"name": "capture_image"}]}, *responses]
    )
    history = [user("u1", "take a photo")]
    events = await run_events(runtime, body("t", "r1", history, tools=[CAMERA_TOOL]))
    check_well_formed(events)
    start = of_type(events, "TOOL_CALL_START")[0]
    history.append(
        {
            "id": start["parentMessageId"],
            "role": "assistant",
            "content": "Smile!",
            "toolCalls": [
                {
                    "id": start["toolCallId"],
                    "type": "function",
                    "function": {"name": "capture_image", "arguments": "{}"},
                }
            ],
        }
    )
    return runtime, history, events, start["toolCallId"]


async def test_plain_text_run(make_runtime) -> None:
    runtime = make_runtime(["Hello from the scripted model."])
    events = await run_events(runtime, body("t", "r1", [user("u1", "hi")]))
    check_well_formed(events)
    assert text_of(events) == "Hello from the scripted model."
    assert len(of_type(events, "TEXT_MESSAGE_CONTENT")) > 1
    assert events[-1]["outcome"] == {"type": "success"}


async def test_server_tool_result_carries_the_checkpointed_message_id(make_runtime) -> None:
    runtime = make_runtime(
        [{"content": "Adding.", "toolCalls": [{"name": "add", "args": {"a": 1, "b": 2}}]}, "3."]
    )
    events = await run_events(runtime, body("t", "r1", [user("u1", "1+2")]))
    check_well_formed(events)
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    state = await runtime.thread_state("t")
    stored = next(m for m in state.messages if isinstance(m, ToolMessage))
    assert result["messageId"] == stored.id and result["content"] == "3"
    args = "".join(e["delta"] for e in of_type(events, "TOOL_CALL_ARGS"))
    assert json.loads(args) == {"a": 1, "b": 2}


async def test_client_tool_suspends_with_pending_ids_and_no_result(make_runtime) -> None:
    _, _, events, call_id = await suspended_on_camera(make_runtime, [])
    assert events[-1]["outcome"] == {"type": "success", "pendingToolCallIds": [call_id]}
    assert not of_type(events, "TOOL_CALL_RESULT")


async def test_resume_by_trailing_tool_message_does_not_echo_the_result(make_runtime) -> None:
    runtime, history, _, call_id = await suspended_on_camera(make_runtime, ["Nice photo."])
    envelope = json.dumps({"mimeType": "image/jpeg", "data": "AAAA"})
    history.append({"id": "tm1", "role": "tool", "toolCallId": call_id, "content": envelope})
    events = await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL]))
    check_well_formed(events)
    assert text_of(events) == "Nice photo."
    assert not of_type(events, "TOOL_CALL_RESULT")
    seen = runtime.model.received[-1]
    tool_message = next(m for m in seen if isinstance(m, ToolMessage))
    assert tool_message.content == envelope and tool_message.id == "tm1"


async def test_resume_entries_accept_the_tool_call_id_and_echo_the_result(make_runtime) -> None:
    runtime, history, _, call_id = await suspended_on_camera(make_runtime, ["Got it."])
    resume = [
        {"interruptId": call_id, "status": "resolved", "payload": {"mimeType": "x", "data": "y"}}
    ]
    events = await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL], resume=resume))
    check_well_formed(events)
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert result["toolCallId"] == call_id
    assert json.loads(result["content"]) == {"mimeType": "x", "data": "y"}
    assert text_of(events) == "Got it."


async def test_resume_by_forwarded_command_with_queued_messages(make_runtime) -> None:
    runtime, history, _, call_id = await suspended_on_camera(make_runtime, ["Seen, and noted."])
    command = {
        "resume": '{"error": "Permission denied"}',
        "interruptEvent": {"toolCallId": call_id},
        "queuedMessages": ["also, hurry"],
    }
    payload = body("t", "r2", history, tools=[CAMERA_TOOL], forwardedProps={"command": command})
    events = await run_events(runtime, payload)
    check_well_formed(events)
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == '{"error": "Permission denied"}'
    seen = runtime.model.received[-1]
    kinds = [type(m).__name__ for m in seen]
    # The queued text comes after the tool result, never between call and result.
    assert kinds[-2:] == ["ToolMessage", "HumanMessage"] and seen[-1].content == "also, hurry"


async def test_two_pending_client_tools_answered_by_resume_entries(make_runtime) -> None:
    runtime = make_runtime(
        [
            {
                "toolCalls": [
                    {"name": "capture_image"},
                    {"name": "ask_user", "args": {"question": "?"}},
                ]
            },
            "Both done.",
        ]
    )
    events = await run_events(
        runtime, body("t", "r1", [user("u1", "go")], tools=[CAMERA_TOOL, ASK_TOOL])
    )
    pending = events[-1]["outcome"]["pendingToolCallIds"]
    assert len(pending) == 2
    resume = [
        {"interruptId": cid, "status": "resolved", "payload": f"answer {i}"}
        for i, cid in enumerate(pending)
    ]
    events = await run_events(
        runtime, body("t", "r2", [user("u1", "go")], tools=[CAMERA_TOOL, ASK_TOOL], resume=resume)
    )
    check_well_formed(events)
    # Each answer reaches its own call; the two resumed calls run concurrently, so their
    # results may stream in either order (seen under load).
    results = {e["toolCallId"]: e["content"] for e in of_type(events, "TOOL_CALL_RESULT")}
    assert results == {cid: f"answer {i}" for i, cid in enumerate(pending)}
    assert text_of(events) == "Both done."


async def test_cancelled_resume_entry_gives_the_model_an_error_result(make_runtime) -> None:
    runtime, history, _, call_id = await suspended_on_camera(make_runtime, ["OK, no photo."])
    resume = [{"interruptId": call_id, "status": "cancelled"}]
    await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL], resume=resume))
    tool_message = next(m for m in runtime.model.received[-1] if isinstance(m, ToolMessage))
    assert tool_message.status == "error" and "cancelled" in str(tool_message.content)


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"resume": [{"interruptId": "nope", "status": "resolved"}]}, "no_pending_interrupt"),
        ({"forwardedProps": {"command": {"resume": "x"}}}, "no_pending_interrupt"),
    ],
)
async def test_resume_with_nothing_pending_is_409(make_runtime, extra, code) -> None:
    runtime = make_runtime(["hi"])
    await run_events(runtime, body("t", "r1", [user("u1", "hi")]))
    with pytest.raises(ProtocolError) as info:
        await run_events(runtime, body("t", "r2", [user("u1", "hi")], **extra))
    assert (info.value.status, info.value.code) == (409, code)
    assert not runtime.is_busy("t")


async def test_resume_naming_an_unknown_interrupt_is_409_mismatch(make_runtime) -> None:
    runtime, history, _, _ = await suspended_on_camera(make_runtime, [])
    for extra in (
        {"resume": [{"interruptId": "nope", "status": "resolved"}]},
        {"forwardedProps": {"command": {"resume": "x", "interruptEvent": {"toolCallId": "nope"}}}},
    ):
        with pytest.raises(ProtocolError) as info:
            await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL], **extra))
        assert (info.value.status, info.value.code) == (409, "interrupt_mismatch")
        assert info.value.detail["pending"][0]["toolName"] == "capture_image"
    # Nothing was lost: the call is still pending.
    assert len((await runtime.thread_state("t")).pending) == 1


async def test_a_new_user_message_while_a_client_tool_waits_moves_on(make_runtime) -> None:
    runtime, history, _, call_id = await suspended_on_camera(
        make_runtime, ["Something else, then."]
    )
    history.append(user("u2", "forget the photo"))
    events = await run_events(runtime, body("t", "r2", history, tools=[CAMERA_TOOL]))
    check_well_formed(events)
    assert text_of(events) == "Something else, then."
    # The client learns how the abandoned call ended, so its history has no dangling call.
    closed = of_type(events, "TOOL_CALL_RESULT")
    assert [e["toolCallId"] for e in closed] == [call_id]
    seen = runtime.model.received[-1]
    assert [type(m).__name__ for m in seen[-3:]] == ["AIMessage", "ToolMessage", "HumanMessage"]


async def test_resent_history_is_not_duplicated(make_runtime) -> None:
    runtime = make_runtime(["First.", "Second."])
    events = await run_events(runtime, body("t", "r1", [user("u1", "one")]))
    assistant_id = of_type(events, "TEXT_MESSAGE_START")[0]["messageId"]
    history = [
        user("u1", "one"),
        {"id": assistant_id, "role": "assistant", "content": "First."},
        user("u2", "two"),
    ]
    await run_events(runtime, body("t", "r2", history))
    seen = runtime.model.received[-1]
    assert [m.content for m in seen if isinstance(m, HumanMessage)] == ["one", "two"]
    assert len(seen) == 3


async def test_full_history_on_an_empty_thread_is_converted_and_repaired(make_runtime) -> None:
    runtime = make_runtime(["Continuing."])
    history = [
        user("u1", "earlier"),
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}{}"}}
            ],
        },
        {"id": "stray", "role": "tool", "toolCallId": "unknown", "content": "x"},
        user("u2", "now"),
    ]
    events = await run_events(runtime, body("fresh", "r1", history))
    check_well_formed(events)
    seen = runtime.model.received[-1]
    assert [type(m).__name__ for m in seen] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert seen[1].tool_calls[0]["args"] == {}
    assert seen[2].status == "error"


async def test_error_mid_stream_closes_the_text_and_ends_with_run_error(make_runtime) -> None:
    runtime = make_runtime(
        [{"content": "Partial answer", "error": "provider overloaded"}, "Recovered."]
    )
    events = await run_events(runtime, body("t", "r1", [user("u1", "hi")]))
    check_well_formed(events)
    assert events[-1] == {
        "type": "RUN_ERROR",
        "message": "provider overloaded",
        "code": "model_error",
    }
    assert events[-2]["type"] == "TEXT_MESSAGE_END"
    events = await run_events(runtime, body("t", "r2", [user("u1", "hi"), user("u2", "again")]))
    assert text_of(events) == "Recovered."


async def test_running_out_of_script_is_a_run_error_with_its_code(make_runtime) -> None:
    runtime = make_runtime([])
    events = await run_events(runtime, body("t", "r1", [user("u1", "hi")]))
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "fake_responses_exhausted"
    assert not runtime.is_busy("t")


async def test_reasoning_is_streamed_as_reasoning_events(make_runtime) -> None:
    runtime = make_runtime([{"reasoning": "Let me think.", "content": "Answer."}])
    events = await run_events(runtime, body("t", "r1", [user("u1", "q")]))
    check_well_formed(events)
    kinds = [e["type"] for e in events]
    assert kinds.index("REASONING_START") < kinds.index("REASONING_MESSAGE_CONTENT")
    assert kinds.index("REASONING_END") < kinds.index("TEXT_MESSAGE_START")
    thought = "".join(e["delta"] for e in of_type(events, "REASONING_MESSAGE_CONTENT"))
    assert thought == "Let me think."


async def test_context_reaches_the_model_as_a_system_prompt(make_runtime) -> None:
    runtime = make_runtime(["ok"])
    context = [{"description": "notebook", "value": "analysis.ipynb"}]
    await run_events(runtime, body("t", "r1", [user("u1", "hi")], context=context))
    first = runtime.model.received[-1][0]
    assert first.type == "system" and "analysis.ipynb" in first.content


def test_runtime_model_is_the_scripted_one(make_runtime) -> None:
    assert isinstance(make_runtime([]).model, FakeChatModel)


async def test_a_resume_that_omits_the_tool_declaration_still_delivers_the_result(
    make_runtime,
) -> None:
    runtime, history, _, call_id = await suspended_on_camera(make_runtime, ["Thanks."])
    history.append({"id": "tm", "role": "tool", "toolCallId": call_id, "content": "ok"})
    events = await run_events(runtime, body("t", "r2", history))  # no tools declared
    assert text_of(events) == "Thanks."
    tool_message = next(m for m in runtime.model.received[-1] if isinstance(m, ToolMessage))
    assert tool_message.content == "ok" and tool_message.status == "success"


@pytest.mark.parametrize("name", ["has space", "", "x" * 65, "ünï"])
async def test_tool_names_providers_reject_are_422(make_runtime, name: str) -> None:
    tool = {**CAMERA_TOOL, "name": name}
    with pytest.raises(ProtocolError) as info:
        await run_events(make_runtime([]), body("t", "r", [user("u", "x")], tools=[tool]))
    assert info.value.code == "invalid_input"
    assert info.value.detail["errors"][0]["path"] == "tools[0].name"


async def test_duplicate_tool_names_are_422(make_runtime) -> None:
    with pytest.raises(ProtocolError) as info:
        await run_events(
            make_runtime([]), body("t", "r", [user("u", "x")], tools=[CAMERA_TOOL, CAMERA_TOOL])
        )
    assert "repeated" in info.value.message


async def test_any_other_interrupt_ends_with_the_interrupt_outcome_and_resumes(
    make_runtime,
) -> None:
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    @tool
    def deploy(target: str) -> str:
        """Deploys after a confirmation."""
        answer = interrupt(
            {
                "reason": "confirmation",
                "message": f"Deploy to {target}?",
                "responseSchema": {
                    "type": "object",
                    "properties": {"approved": {"type": "boolean"}},
                },
            }
        )
        return "deployed" if answer.get("approved") else "not deployed"

    runtime = make_runtime(
        [{"toolCalls": [{"name": "deploy", "args": {"target": "prod"}}]}, "All done."],
        tools=[deploy],
    )
    events = await run_events(runtime, body("t", "r1", [user("u1", "ship it")]))
    check_well_formed(events)
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (found,) = outcome["interrupts"]
    assert found["reason"] == "confirmation" and found["message"] == "Deploy to prod?"
    assert found["responseSchema"]["properties"]["approved"] == {"type": "boolean"}
    # A new turn without answering is refused before any stream, and loses nothing.
    with pytest.raises(ProtocolError) as info:
        await run_events(runtime, body("t", "r2", [user("u1", "ship it"), user("u2", "hm")]))
    assert info.value.code == "interrupt_pending"
    resume = [{"interruptId": found["id"], "status": "resolved", "payload": {"approved": True}}]
    events = await run_events(runtime, body("t", "r3", [user("u1", "ship it")], resume=resume))
    check_well_formed(events)
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == "deployed"
    assert text_of(events) == "All done."


async def test_live_tool_output_travels_as_a_custom_event(make_runtime) -> None:
    from langchain_core.tools import tool
    from langgraph.config import get_stream_writer

    @tool
    def noisy() -> str:
        """Prints two lines."""
        write = get_stream_writer()
        for line in ("one\n", "two\n"):
            write({"type": "tool_output", "chunk": line, "name": "noisy", "id": "call-n"})
        return "ok"

    runtime = make_runtime(
        [{"toolCalls": [{"name": "noisy", "id": "call-n"}]}, "Done."], tools=[noisy]
    )
    events = await run_events(runtime, body("t", "r1", [user("u1", "go")]))
    check_well_formed(events)
    custom = of_type(events, "CUSTOM")
    assert [e["value"]["chunk"] for e in custom] == ["one\n", "two\n"]
    assert custom[0] == {
        "type": "CUSTOM",
        "name": "gth.tool_output",
        "value": {"chunk": "one\n", "name": "noisy", "toolCallId": "call-n"},
    }
