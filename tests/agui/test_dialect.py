"""The AG-UI dialects: 1.0 for clients that say so, 0.x for ``@ag-ui/client`` 0.0.x clients
(CopilotKit's runtime 1.75), which send no ``protocolVersion`` and refuse 1.0's ``outcome``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ag_ui.core as agui
import pytest

from gth_jupyter.agui.dialect import INTERRUPT_EVENT, dialect_of
from gth_jupyter.agui.request import parse_input, parse_request
from gth_jupyter.agui.run import ThreadRun
from gth_jupyter.config import ConfigError, load_config
from tests.conftest import CAMERA_TOOL, body, of_type, run_events, text_of


def legacy_body(*args: Any, **extra: Any) -> bytes:
    """A body as a pre-1.0 client sends it: no protocolVersion."""
    return body(*args, protocolVersion=None, **extra)


def user(mid: str, text: str) -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": text}


async def events_of(runtime: Any, payload: bytes, protocol: str = "auto") -> list[dict[str, Any]]:
    return await run_events(runtime, payload, protocol)


def check_legacy(events: list[dict[str, Any]]) -> None:
    """What a 0.0.59 verifier needs: no 1.0-only fields on the run's bounds."""
    assert events[0]["type"] == "RUN_STARTED" and "protocolVersion" not in events[0]
    assert events[-1]["type"] == "RUN_FINISHED" and "outcome" not in events[-1]
    assert all(e["type"] != "RUN_FINISHED" for e in events[:-1])


@pytest.mark.parametrize(
    ("version", "setting", "expected"),
    [
        ("1.0", "auto", "1.0"),
        (None, "auto", "0.x"),
        ("0.0.59", "auto", "0.x"),
        ("1.1", "auto", "1.0"),
        (None, "1.0", "1.0"),
        ("1.0", "0.x", "0.x"),
    ],
)
def test_the_dialect_follows_protocol_version_unless_the_setting_forces_one(
    version: str | None, setting: str, expected: str
) -> None:
    data: dict[str, Any] = {"messages": []}
    if version is not None:
        data["protocolVersion"] = version
    request = parse_input(json.dumps(data).encode())
    assert dialect_of(request, setting) == expected


async def test_a_0x_chat_has_no_outcome_and_no_protocol_version(make_runtime) -> None:
    runtime = make_runtime(["Hello from the scripted model."])
    events = await events_of(runtime, legacy_body("t", "r1", [user("u1", "hi")]))
    check_legacy(events)
    assert text_of(events) == "Hello from the scripted model."
    assert events[0]["threadId"] == "t" and events[-1]["runId"] == "r1"


async def test_omitted_ids_come_back_in_run_started(make_runtime) -> None:
    runtime = make_runtime(["Hi."])
    events = await events_of(runtime, json.dumps({"messages": [user("1", "Hello")]}).encode())
    started, finished = events[0], events[-1]
    assert started["threadId"] and started["runId"]
    assert (finished["threadId"], finished["runId"]) == (started["threadId"], started["runId"])


async def test_a_0x_client_tool_suspends_as_gaunt_sloth_does_and_resumes_by_tool_message(
    make_runtime,
) -> None:
    runtime = make_runtime(
        [{"content": "Smile!", "toolCalls": [{"name": "capture_image"}]}, "A cat."]
    )
    history = [user("u1", "take a photo")]
    events = await events_of(runtime, legacy_body("t", "r1", history, tools=[CAMERA_TOOL]))
    check_legacy(events)
    kinds = [e["type"] for e in events]
    assert kinds[-2:] == ["TOOL_CALL_END", "RUN_FINISHED"]
    assert set(kinds[kinds.index("TOOL_CALL_START") + 1 : -2]) == {"TOOL_CALL_ARGS"}
    assert not of_type(events, "TOOL_CALL_RESULT") and not of_type(events, "CUSTOM")
    start = of_type(events, "TOOL_CALL_START")[0]
    call = {
        "id": start["toolCallId"],
        "type": "function",
        "function": {"name": "capture_image", "arguments": "{}"},
    }
    history += [
        {
            "id": start["parentMessageId"],
            "role": "assistant",
            "content": "Smile!",
            "toolCalls": [call],
        },
        {"id": "tm1", "role": "tool", "toolCallId": start["toolCallId"], "content": "a photo"},
    ]
    events = await events_of(runtime, legacy_body("t", "r2", history, tools=[CAMERA_TOOL]))
    check_legacy(events)
    assert not of_type(events, "TOOL_CALL_RESULT")  # the client's own result is not echoed
    assert text_of(events) == "A cat."


async def test_a_0x_approval_ends_with_on_interrupt_and_resumes_by_command(make_runtime) -> None:
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    @tool
    def deploy(target: str) -> str:
        """Deploys after a confirmation."""
        answer = interrupt({"reason": "confirmation", "message": f"Deploy to {target}?"})
        return "deployed" if answer.get("approved") else "not deployed"

    runtime = make_runtime(
        [{"toolCalls": [{"name": "deploy", "args": {"target": "prod"}}]}, "All done."],
        tools=[deploy],
    )
    events = await events_of(runtime, legacy_body("t", "r1", [user("u1", "ship it")]))
    check_legacy(events)
    (custom,) = of_type(events, "CUSTOM")
    assert custom["name"] == INTERRUPT_EVENT and events[-2] is custom
    value = json.loads(custom["value"])
    assert value["message"] == "Deploy to prod?" and value["interruptId"]
    resume = {"command": {"resume": {"approved": True}}}
    events = await events_of(
        runtime, legacy_body("t", "r2", [user("u1", "ship it")], forwardedProps=resume)
    )
    check_legacy(events)
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == "deployed"
    assert text_of(events) == "All done."


async def test_the_setting_forces_a_dialect(make_runtime) -> None:
    runtime = make_runtime(
        [{"content": "Smile!", "toolCalls": [{"name": "capture_image"}]}, "x", "y"]
    )
    forced = await events_of(
        runtime, legacy_body("t1", "r1", [user("u1", "go")], tools=[CAMERA_TOOL]), protocol="1.0"
    )
    assert forced[0]["protocolVersion"] == "1.0"
    assert forced[-1]["outcome"]["pendingToolCallIds"]
    legacy = await events_of(
        runtime, body("t2", "r1", [user("u1", "go")], protocolVersion="1.0"), protocol="0.x"
    )
    check_legacy(legacy)


def test_the_setting_is_validated_and_named_in_the_error(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {"agui": {"protocol": "1.0"}, "commands": {"api": {"agui": {"protocol": "0.x"}}}}
        )
    )
    config = load_config(good)
    assert config.for_command("api").agui.protocol == "0.x"
    assert config.for_command("notebook").agui.protocol == "1.0"
    assert load_config(tmp_path / "good.json").for_command("code").agui.protocol == "1.0"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"commands": {"api": {"agui": {"protocol": "2.0"}}}}))
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert "commands.api.agui.protocol" in str(info.value)


def test_the_default_is_auto() -> None:
    from gth_jupyter.config import GthConfig

    assert GthConfig().for_command("api").agui.protocol == "auto"
    assert agui.RunAgentInput.model_fields["protocol_version"].alias == "protocolVersion"


async def test_the_clients_state_reaches_the_plan(make_runtime) -> None:
    runtime = make_runtime(["ok"])
    payload = body("ts", "r1", [user("u1", "hi")], protocolVersion="1.0", state={"color": "blue"})
    run = ThreadRun(runtime, parse_request(payload))
    try:
        assert (await run.plan()).plan.state == {"color": "blue"}
    finally:
        await run.aclose()
