"""``gth-jupyter serve``: token auth, CORS, the same routes as the extension."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.server.standalone import make_app
from gth_jupyter.store import CheckpointStore
from tests.helpers import free_port
from tests.sse import sse_events

TOKEN = "s3cret-s3cret-s3cret"


@pytest_asyncio.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    config = GthConfig.model_validate(
        {
            "llm": {"type": "fake", "responses": ["Hi there.", "Again."]},
            "commands": {"api": {"cors": {"allowOrigin": "http://localhost:5555"}}},
        }
    )
    registry = AgentRegistry(config, command="api", store=CheckpointStore("memory"))
    app = make_app(registry, token=TOKEN, max_body_bytes=1000)
    port = free_port()
    server = app.listen(port, address="127.0.0.1")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        yield http
    server.stop()


AUTH = {"Authorization": f"token {TOKEN}"}
RUN = {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}


@pytest.mark.parametrize("headers", [{}, {"Authorization": "token nope"}, {"Authorization": TOKEN}])
async def test_every_route_needs_the_token(client: httpx.AsyncClient, headers) -> None:
    routes = [("GET", "/health"), ("GET", "/info"), ("POST", "/agents/default/run")]
    routes += [("GET", "/agents/default/capabilities"), ("GET", "/gth/agents/default/capabilities")]
    for method, path in routes:
        response = await client.request(method, path, headers=headers, json=RUN)
        assert response.status_code == 401
        assert response.json()["code"] == "unauthorized"


async def test_bearer_and_token_schemes_work(client: httpx.AsyncClient) -> None:
    assert (await client.get("/health", headers=AUTH)).json() == {"status": "ok"}
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert (await client.get("/gth/health", headers=bearer)).status_code == 200


async def test_cors_headers_and_preflight(client: httpx.AsyncClient) -> None:
    preflight = await client.options("/agents/default/run")
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == "http://localhost:5555"
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    info = await client.get("/info", headers=AUTH)
    assert info.headers["Access-Control-Allow-Origin"] == "http://localhost:5555"
    assert info.json()["command"] == "api"


async def test_runs_on_both_route_spellings(client: httpx.AsyncClient) -> None:
    for path, run_id in [("/agents/default/run", "r1"), ("/gth/agents/default/run", "r2")]:
        async with client.stream(
            "POST", path, headers=AUTH, json={**RUN, "runId": run_id}
        ) as response:
            assert response.headers["content-type"] == "text/event-stream"
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
        events = sse_events(body)
        assert events[0]["runId"] == run_id and events[-1]["type"] == "RUN_FINISHED"


async def test_configured_body_limit_and_unknown_routes(client: httpx.AsyncClient) -> None:
    big = await client.post("/agents/default/run", headers=AUTH, content=b"{" + b" " * 2000 + b"}")
    assert big.status_code == 413 and big.json()["code"] == "body_too_large"
    missing = await client.get("/nope", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"


def test_cli_prints_a_generated_token_and_serves(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"llm": {"type": "fake", "responses": ["x"]}}))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "GTH_JUPYTER_TOKEN"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gth_jupyter.server.cli",
            "serve",
            "--port",
            str(port),
            "--memory",
            "-c",
            str(config),
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in banner
        token = proc.stdout.readline().strip().removeprefix("Token: ")
        assert len(token) >= 20
        ok = httpx.get(
            f"http://127.0.0.1:{port}/health", headers={"Authorization": f"token {token}"}
        )
        assert ok.json() == {"status": "ok"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_reports_a_bad_config_clearly(tmp_path: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text('{"commands": {"api": {"port": 99999}}}')
    result = subprocess.run(
        [sys.executable, "-m", "gth_jupyter.server.cli", "serve", "-c", str(config)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 2
    assert "commands.api.port" in result.stderr and str(config) in result.stderr


async def test_gaunt_sloths_documented_bodies_run_with_generated_ids(
    client: httpx.AsyncClient,
) -> None:
    hello = [{"role": "user", "content": "Hello", "id": "1"}]
    with_thread = await client.post(
        "/agents/default/run", headers=AUTH, json={"threadId": "t1", "messages": hello}
    )
    assert with_thread.status_code == 200, with_thread.text
    events = sse_events(with_thread.content)
    assert events[0]["threadId"] == "t1" and events[0]["runId"]
    bare = await client.post("/agents/default/run", headers=AUTH, json={"messages": hello})
    assert bare.status_code == 200, bare.text
    started, finished = sse_events(bare.content)[0], sse_events(bare.content)[-1]
    assert started["threadId"] not in ("", "t1") and started["runId"]
    assert finished["type"] == "RUN_FINISHED" and finished["threadId"] == started["threadId"]
    # No protocolVersion: the 0.x dialect (no outcome, no protocolVersion on RUN_STARTED).
    assert "outcome" not in finished and "protocolVersion" not in started


async def test_the_commands_agui_protocol_setting_reaches_the_route() -> None:
    config = GthConfig.model_validate(
        {
            "llm": {"type": "fake", "responses": ["Hi there."]},
            "commands": {"api": {"agui": {"protocol": "1.0"}}},
        }
    )
    registry = AgentRegistry(config, command="api", store=CheckpointStore("memory"))
    app = make_app(registry, token=TOKEN, max_body_bytes=100_000)
    server = app.listen(port := free_port(), address="127.0.0.1")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            info = (await http.get("/info", headers=AUTH)).json()
            assert info["agui"]["protocol"] == "1.0"
            response = await http.post("/agents/default/run", headers=AUTH, json=RUN)
            events = sse_events(response.content)
            assert events[0]["protocolVersion"] == "1.0"
            assert events[-1]["outcome"] == {"type": "success"}
    finally:
        server.stop()


async def test_bad_input_is_json_with_a_code_never_500(client: httpx.AsyncClient) -> None:
    for payload in [
        b'{"messages": "nope"}',
        b'{"threadId": 5, "messages": []}',
        b'{"messages": [], "protocolVersion": 1}',
        b"null",
        b"[]",
    ]:
        response = await client.post("/agents/default/run", headers=AUTH, content=payload)
        assert response.status_code in (400, 422), (payload, response.text)
        assert response.json()["code"] in ("invalid_json", "invalid_input")


async def test_a_refusal_before_the_body_is_read_says_the_connection_closes(
    client: httpx.AsyncClient,
) -> None:
    """A 401 is answered before the body is read, and tornado then closes the connection. The
    answer must say so (``Connection: close``): a keep-alive client (Node's fetch) that reused
    the socket met "fetch failed" on its next request when the close lost the race."""
    import asyncio

    host, port = client.base_url.host, client.base_url.port
    assert port is not None
    reader, writer = await asyncio.open_connection(host, port)
    body = json.dumps(RUN).encode()
    writer.write(
        b"POST /agents/default/run HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    await writer.drain()
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode().lower()
    writer.close()
    assert head.startswith("http/1.1 401")
    assert "connection: close" in head
