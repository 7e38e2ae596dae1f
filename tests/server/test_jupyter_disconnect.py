"""Busy threads and disconnects on a real Jupyter server, over a raw socket."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from tests.sse import sse_events as parse_sse


@pytest.fixture
def gth_script() -> list[Any]:
    return [{"content": "slow " * 400, "delayMs": 5}, "Fresh answer."]


async def open_stream(
    port: int, path: str, token: str, body: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    data = body.encode()
    writer.write(
        (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode()
        + data
    )
    await writer.drain()
    return reader, writer


async def test_busy_thread_is_409_and_a_disconnect_frees_it(
    jp_fetch, jp_serverapp, http_server_client, jp_base_url
) -> None:
    port = http_server_client.get_http_port()
    token = jp_serverapp.identity_provider.token
    path = f"{jp_base_url}gth/agents/default/run"
    first = json.dumps(
        {
            "threadId": "t",
            "runId": "r1",
            "messages": [{"id": "u1", "role": "user", "content": "long"}],
        }
    )
    reader, writer = await open_stream(port, path, token, first)
    head = await reader.readuntil(b"TEXT_MESSAGE_CONTENT")
    assert b"200 OK" in head

    second = json.dumps(
        {"threadId": "t", "runId": "r2", "messages": [{"id": "u2", "role": "user", "content": "x"}]}
    )
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=second)
    assert info.value.code == 409
    assert info.value.response.headers["Retry-After"]
    assert json.loads(info.value.response.body)["code"] == "run_busy"

    writer.close()  # the client goes away mid-stream
    for _ in range(50):
        await asyncio.sleep(0.05)
        try:
            response = await jp_fetch("gth", "agents", "default", "run", method="POST", body=second)
            break
        except HTTPClientError as exc:
            assert exc.code == 409
    else:
        pytest.fail("the thread stayed busy after the client disconnected")
    text = "".join(e.get("delta", "") for e in parse_sse(response.body))
    assert text == "Fresh answer."


async def test_however_a_run_ends_its_thread_is_free_again(
    jp_fetch, jp_serverapp, http_server_client, jp_base_url
) -> None:
    """Refused after its thread was claimed, stopped mid-stream, finished: each run lets the
    thread go (the client's disconnect is the test above)."""
    port = http_server_client.get_http_port()
    token = jp_serverapp.identity_provider.token
    path = f"{jp_base_url}gth/agents/default/run"

    def run_body(run_id: str, **extra: Any) -> str:
        hello = [{"id": f"u-{run_id}", "role": "user", "content": "hi"}]
        return json.dumps({"threadId": "t", "runId": run_id, "messages": hello, **extra})

    async def busy() -> bool:
        return bool(json.loads((await jp_fetch("gth", "threads", "t")).body)["busy"])

    # A resume that answers nothing: the thread is claimed, then the plan refuses it.
    nothing_waits = run_body("r0", resume=[{"interruptId": "i-1", "status": "resolved"}])
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=nothing_waits)
    assert refused.value.code == 409
    assert json.loads(refused.value.response.body)["code"] == "no_pending_interrupt"
    assert not await busy()

    reader, writer = await open_stream(port, path, token, run_body("r1"))
    await reader.readuntil(b"TEXT_MESSAGE_CONTENT")
    assert (await jp_fetch("gth", "runs", "r1", method="DELETE")).code == 204
    await reader.readuntil(b"run_cancelled")
    writer.close()
    for _ in range(50):  # the stopped run lets go as it ends
        if not await busy():
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the thread stayed busy after its run was stopped")

    response = await jp_fetch("gth", "agents", "default", "run", method="POST", body=run_body("r2"))
    assert parse_sse(response.body)[-1]["type"] == "RUN_FINISHED"
    assert not await busy()
