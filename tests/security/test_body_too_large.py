"""Item 7: every oversized body, on both hosts, is ``413 {"code": "body_too_large", ...}``.

The review's repro: a 12 MB POST to ``gth-jupyter serve`` got tornado's empty ``400 Bad Request``.
Here the same goes to both hosts at sizes far above twice the limit (where tornado's own check
used to answer), chunked, and with a ``Content-Length`` that promises more than is sent. The
raw-socket client sends only the headers and a first slice, so an answer proves the server
refused the body before reading it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.server.standalone import make_app
from gth_jupyter.store import CheckpointStore
from tests.helpers import free_port

TOKEN = "body-limit-token-0123456789"
LIMIT = 100_000
RUN = json.dumps(
    {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}
).encode()


async def raw_request(port: int, head: str, body: bytes = b"") -> tuple[int, dict[str, str], Any]:
    """Sends ``head`` and ``body`` as they are, then reads one response (not sending the rest
    of any body it promised)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode("latin-1") + body)
        await writer.drain()
        raw_head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=20)
        status_line, *lines = raw_head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        payload = await asyncio.wait_for(
            reader.readexactly(int(headers["content-length"])), timeout=20
        )
    finally:
        writer.close()
    status = int(status_line.split()[1])
    assert status != 100, "the server invited a body it will refuse"
    return status, headers, json.loads(payload)


def post_head(path: str, auth: dict[str, str], extra: str) -> str:
    auth_lines = "".join(f"{k}: {v}\r\n" for k, v in auth.items())
    return f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth_lines}{extra}\r\n"


def assert_too_large(status: int, body: Any) -> None:
    assert status == 413, body
    assert body["code"] == "body_too_large"
    assert body["detail"]["limit"] == LIMIT and body["detail"]["size"] > LIMIT
    assert "limit" in body["message"]


async def refusals(port: int, path: str, auth: dict[str, str]) -> None:
    """The oversized bodies every host must refuse with the 413 JSON."""
    # Far above twice the limit (tornado's own cap was 2x), and above any server-wide cap
    # (Jupyter's max_body_size is 512 MiB): only the headers and 1 KB are ever sent.
    for declared in (LIMIT * 120, 10 * 1024**3):
        status, headers, body = await raw_request(
            port, post_head(path, auth, f"Content-Length: {declared}\r\n"), b"{" * 1024
        )
        assert_too_large(status, body)
        assert body["detail"]["size"] == declared
        assert headers["connection"] == "close"
    # A client waiting for "100 Continue" is refused instead, and never sends the body.
    status, _, body = await raw_request(
        port, post_head(path, auth, f"Content-Length: {LIMIT + 1}\r\nExpect: 100-continue\r\n")
    )
    assert_too_large(status, body)
    # Chunked: no length up front; refused at the first chunk past the limit.
    chunk = b"x" * 50_000
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(5))
    status, _, body = await raw_request(
        port, post_head(path, auth, "Transfer-Encoding: chunked\r\n"), chunks
    )
    assert_too_large(status, body)


# -- the standalone server ------------------------------------------------------------------


@pytest_asyncio.fixture
async def standalone() -> AsyncIterator[int]:
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": ["ok"] * 5}})
    registry = AgentRegistry(config, command="api", store=CheckpointStore("memory"))
    port = free_port()
    server = make_app(registry, token=TOKEN, max_body_bytes=LIMIT).listen(port, address="127.0.0.1")
    yield port
    server.stop()
    await registry.close()


AUTH = {"Authorization": f"token {TOKEN}"}


async def test_standalone_refuses_every_oversized_body_with_413_json(standalone: int) -> None:
    await refusals(standalone, "/agents/default/run", AUTH)
    # Nothing of that kept the server from serving the next run.
    async with httpx.AsyncClient() as client:
        ok = await client.post(
            f"http://127.0.0.1:{standalone}/agents/default/run", headers=AUTH, content=RUN
        )
    assert ok.status_code == 200 and ok.text.rstrip().endswith("}")


async def test_standalone_the_reviews_12_mb_post_from_clients_that_send_first(
    standalone: int,
) -> None:
    """http.client (and requests on it) sends the whole body before it reads: it must still see
    the 413, not a reset connection. httpx reads while it sends."""

    def post_with_http_client() -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", standalone, timeout=30)
        connection.request("POST", "/agents/default/run", body=b"x" * 12_000_000, headers=AUTH)
        response = connection.getresponse()
        return response.status, response.read()

    status, raw = await asyncio.to_thread(post_with_http_client)
    assert_too_large(status, json.loads(raw))

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(240):
            yield b"x" * 50_000

    async with httpx.AsyncClient() as client:
        url = f"http://127.0.0.1:{standalone}/gth/agents/default/run"
        sized = await client.post(url, headers=AUTH, content=b"x" * 12_000_000)
        streamed = await client.post(url, headers=AUTH, content=chunks())
    assert_too_large(sized.status_code, sized.json())
    assert_too_large(streamed.status_code, streamed.json())


# -- the Jupyter extension ------------------------------------------------------------------


@pytest.fixture
def gth_app() -> dict[str, Any]:
    return {"checkpointer": "memory", "max_body_bytes": LIMIT}


async def test_jupyter_host_refuses_every_oversized_body_with_413_json(
    jp_fetch: Any, jp_http_port: int, jp_base_url: str, jp_auth_header: dict[str, str]
) -> None:
    await jp_fetch("gth", "health")  # the server is up
    await refusals(jp_http_port, f"{jp_base_url}gth/agents/default/run", jp_auth_header)
    ok = await jp_fetch("gth", "agents", "default", "run", method="POST", body=RUN)
    assert ok.code == 200
