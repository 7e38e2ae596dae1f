"""An OAuth MCP server in the Jupyter server extension: ``gth/info`` shows the authorization
URL, the callback is ``{base_url}gth/oauth/callback`` behind Jupyter's auth, and the token file
lands in the server owner's directory of the Jupyter data directory with mode 0600."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest
import pytest_asyncio
from tornado.httpclient import HTTPClientError

from gth_jupyter.server.identity import server_owner
from gth_jupyter.tools.mcp.oauth import owner_dir
from tests.sse import sse_events

from .mcp_oauth_server import serve_protected


@pytest_asyncio.fixture
async def protected_url() -> Any:
    async with serve_protected() as (url, _):
        yield url


@pytest.fixture
def gth_config(protected_url: str) -> dict[str, Any]:
    call = {"name": "mcp__secure__secret_add", "args": {"a": 20, "b": 22}}
    return {
        "llm": {"type": "fake", "responses": ["Not yet.", {"toolCalls": [call]}, "It is 42."]},
        "builtInTools": [],
        "approvals": "bypass",
        "mcpServers": {
            "secure": {"transport": "http", "url": protected_url, "authProvider": "OAuth"}
        },
    }


async def run(jp_fetch: Any, run_id: str) -> list[dict[str, Any]]:
    body = {
        "threadId": run_id,
        "runId": run_id,
        "protocolVersion": "1.0",
        "messages": [{"id": "u", "role": "user", "content": "add"}],
    }
    response = await jp_fetch(
        "gth", "agents", "default", "run", method="POST", body=json.dumps(body)
    )
    return sse_events(response.body)


async def secure(jp_fetch: Any) -> dict[str, Any]:
    info = json.loads((await jp_fetch("gth", "info")).body)
    return dict(info["mcp"]["servers"]["secure"])


async def test_authorize_through_the_jupyter_callback_route(jp_fetch, jp_base_url) -> None:
    from jupyter_core.paths import jupyter_data_dir

    await run(jp_fetch, "r1")
    info = await secure(jp_fetch)
    assert info["status"] == "needs_authorization"

    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("gth", "oauth", "callback", params={"code": "x", "state": "nope"})
    assert refused.value.code == 400
    assert refused.value.response is not None
    assert json.loads(refused.value.response.body)["code"] == "oauth_state_unknown"

    async with httpx.AsyncClient(timeout=30) as browser:
        answer = await browser.get(info["authorizationUrl"])
    callback = urlsplit(answer.headers["location"])
    assert callback.path == f"{jp_base_url}gth/oauth/callback"
    page = await jp_fetch("gth", "oauth", "callback", params=dict(parse_qsl(callback.query)))
    assert b"You can close this tab" in page.body

    for _ in range(200):
        if (info := await secure(jp_fetch))["status"] == "ok":
            break
        await asyncio.sleep(0.05)
    assert info["status"] == "ok"

    events = await run(jp_fetch, "r2")
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert "42" in result["content"]

    oauth = Path(jupyter_data_dir()) / "gth_jupyter" / "mcp-oauth"
    token_file = owner_dir(oauth, server_owner()) / "secure.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
