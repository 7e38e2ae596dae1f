"""The extension's routes on a real Jupyter server: auth, JSON refusals, SSE runs."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError

from tests.conftest import body as run_body
from tests.sse import sse_events

#: For the tests that store threads: the in-memory store and the shared PostgreSQL one.
STORES = pytest.mark.parametrize("gth_checkpointer", ["memory", "postgres"], indirect=True)

CAMERA = {
    "name": "capture_image",
    "description": "webcam",
    "parameters": {"type": "object", "properties": {}},
}


@STORES
async def test_health_and_info(jp_fetch) -> None:
    health = await jp_fetch("gth", "health")
    assert json.loads(health.body) == {"status": "ok"}
    info = json.loads((await jp_fetch("gth", "info")).body)
    assert info["provider"] == "fake" and info["protocolVersion"] == "1.0"
    (agent,) = info["agents"]
    assert agent["name"] == "default"
    # The notebook command reads files by default, writes none, and has no shell.
    assert {"read_file", "gth_status_update", "gth_checklist"} <= set(agent["tools"])
    assert not {"write_file", "run_shell_command"} & set(agent["tools"])
    # What the AG-UI endpoint offers: both dialects, the auto default, state and activity.
    offered = info["agui"]
    assert offered["dialects"] == ["1.0", "0.x"] and offered["protocol"] == "auto"
    assert offered["state"]["snapshot"] and offered["state"]["delta"]
    assert offered["activity"]["types"] == ["a2ui-surface"]


@STORES
async def test_a_run_streams_sse(jp_fetch) -> None:
    messages = [{"id": "u1", "role": "user", "content": "hi"}]
    response = await jp_fetch(
        "gth", "agents", "default", "run", method="POST", body=run_body("t", "r", messages)
    )
    assert response.headers["Content-Type"] == "text/event-stream"
    events = sse_events(response.body, lf_only=True)
    assert events[0] == {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
    }
    assert "".join(e.get("delta", "") for e in events) == "Hello from Jupyter."
    assert events[-1]["type"] == "RUN_FINISHED"


@STORES
async def test_server_tool_and_client_tool_rounds(jp_fetch) -> None:
    history = [{"id": "u1", "role": "user", "content": "hi"}]
    await jp_fetch(
        "gth", "agents", "default", "run", method="POST", body=run_body("t", "r1", history)
    )
    history.append({"id": "u2", "role": "user", "content": "status"})
    response = await jp_fetch(
        "gth", "agents", "default", "run", method="POST", body=run_body("t", "r2", history)
    )
    events = sse_events(response.body, lf_only=True)
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["content"] == "busy"
    history.append({"id": "u3", "role": "user", "content": "photo"})
    response = await jp_fetch(
        "gth",
        "agents",
        "default",
        "run",
        method="POST",
        body=run_body("t", "r3", history, tools=[CAMERA]),
    )
    events = sse_events(response.body, lf_only=True)
    pending = events[-1]["outcome"]["pendingToolCallIds"]
    assert len(pending) == 1
    resume = [
        {
            "interruptId": pending[0],
            "status": "resolved",
            "payload": {"mimeType": "image/jpeg", "data": "AA"},
        }
    ]
    response = await jp_fetch(
        "gth",
        "agents",
        "default",
        "run",
        method="POST",
        body=run_body("t", "r4", history, tools=[CAMERA], resume=resume),
    )
    events = sse_events(response.body, lf_only=True)
    assert "".join(e.get("delta", "") for e in events) == "A lovely photo."
    assert [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == pending


@STORES
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ("{not json", 400, "invalid_json"),
        (json.dumps({"threadId": "t"}), 422, "invalid_input"),
        (
            json.dumps(
                {
                    "threadId": "t",
                    "runId": "r",
                    "messages": [],
                    "resume": [{"interruptId": "x", "status": "resolved"}],
                }
            ),
            409,
            "no_pending_interrupt",
        ),
    ],
)
async def test_refusals_are_json_with_a_code(jp_fetch, body: str, status: int, code: str) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
    assert info.value.code == status
    payload = json.loads(info.value.response.body)
    assert payload["code"] == code and payload["message"]


async def test_unknown_agent_is_404_json(jp_fetch) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("gth", "agents", "nobody", "run", method="POST", body="{}")
    assert info.value.code == 404
    assert json.loads(info.value.response.body)["code"] == "agent_not_found"


async def test_oversized_body_is_413_json(jp_fetch) -> None:
    big = json.dumps(
        {"threadId": "t", "runId": "r", "messages": [], "state": "x" * (5 * 1024 * 1024 + 10)}
    )
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "gth", "agents", "default", "run", method="POST", body=big, request_timeout=60
        )
    assert info.value.code == 413
    assert json.loads(info.value.response.body)["code"] == "body_too_large"


@pytest.mark.parametrize(
    "route",
    [
        ("gth", "health"),
        ("gth", "info"),
        ("gth", "agents", "default", "capabilities"),
        ("gth", "threads", "t"),
    ],
)
async def test_no_token_is_refused(jp_fetch, route) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*route, headers={"Authorization": ""})
    assert info.value.code in (401, 403)


async def test_wrong_token_is_refused(jp_fetch) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("gth", "info", headers={"Authorization": "token wrong"})
    assert info.value.code in (401, 403)
    assert json.loads(info.value.response.body)["code"] in ("unauthorized", "forbidden")


async def test_cookie_without_xsrf_cannot_post(jp_fetch) -> None:
    login = await jp_fetch("gth", "info")  # token auth sets the login cookie
    cookies = [c.split(";")[0] for c in login.headers.get_list("Set-Cookie")]
    assert cookies, "the server should set a login cookie"
    cookie = "; ".join(cookies)
    # The cookie alone authenticates a GET...
    ok = await jp_fetch("gth", "health", headers={"Authorization": "", "Cookie": cookie})
    assert ok.code == 200
    # ...but a POST from a page must also carry the XSRF token.
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "gth",
            "agents",
            "default",
            "run",
            method="POST",
            headers={"Authorization": "", "Cookie": cookie},
            body=run_body("x", "r", [{"id": "u", "role": "user", "content": "hi"}]),
        )
    assert info.value.code == 403


async def test_the_widget_bundle_is_served_from_the_static_route(jp_fetch) -> None:
    response = await jp_fetch("static", "gth_jupyter", "widget.js")
    assert response.code == 200
    assert "javascript" in response.headers["Content-Type"]
