"""MCP servers behind OAuth (``authProvider: "OAuth"``), against a local authorization server:
the first run reports the server as needing authorization with its URL; following that URL
(httpx, no browser) lands on the host's callback route, the server turns ``ok`` and a later run
calls its tool; the token file is the token holder's, 0600, and deleting it forces a new
authorization; a file of the single-user layout before per-user sign-ins is taken over."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import load_config
from gth_jupyter.server.identity import server_owner
from gth_jupyter.store import CheckpointStore
from gth_jupyter.tools.mcp.oauth import FileTokenStorage, OAuthCallbacks, owner_dir
from tests.sse import sse_events as parse_sse
from tests.standalone import standalone

from .mcp_oauth_server import Provider, serve_protected

TOKEN = "t0ken-t0ken-t0ken"
AUTH = {"Authorization": f"token {TOKEN}"}


def config(url: str) -> dict[str, Any]:
    call = {"name": "mcp__secure__secret_add", "args": {"a": 2, "b": 3}}
    return {
        "llm": {"type": "fake", "responses": ["Not yet.", {"toolCalls": [call]}, "Done."]},
        "builtInTools": [],
        "approvals": "bypass",
        "mcpServers": {"secure": {"transport": "http", "url": url, "authProvider": "OAuth"}},
    }


class Host:
    """A standalone server for one registry, with an HTTP client on it."""

    def __init__(self, registry: AgentRegistry, http: httpx.AsyncClient) -> None:
        self.registry = registry
        self.http = http

    async def run(self, run_id: str) -> list[dict[str, Any]]:
        body = {
            "threadId": f"t-{run_id}",
            "runId": run_id,
            "protocolVersion": "1.0",
            "messages": [{"id": "u1", "role": "user", "content": "add"}],
        }
        response = await self.http.post("/gth/agents/default/run", headers=AUTH, json=body)
        assert response.status_code == 200, response.text
        return parse_sse(response.text)

    async def server_info(self) -> dict[str, Any]:
        info = (await self.http.get("/gth/info", headers=AUTH)).json()
        return dict(info["mcp"]["servers"]["secure"])


@pytest_asyncio.fixture
async def protected() -> AsyncIterator[tuple[str, Provider]]:
    async with serve_protected() as served:
        yield served


def host_factory(tmp_path: Path, url: str) -> Any:
    async def make() -> AsyncIterator[Host]:
        options = {"kernels": False, "mcp_timeout": 20, "mcp_oauth_dir": tmp_path / "oauth"}
        async with standalone(tmp_path, config(url), token=TOKEN, **options) as served:
            yield Host(served.registry, served.http)

    return make


async def authorize(host: Host, authorization_url: str) -> httpx.Response:
    """What the browser does: the authorization server redirects back to our callback."""
    async with httpx.AsyncClient(timeout=30) as browser:
        answer = await browser.get(authorization_url)
        assert answer.status_code in (302, 303, 307), answer.text
        callback = answer.headers["location"]
        assert callback.startswith(f"{host.http.base_url}/gth/oauth/callback?"), callback
        return await browser.get(callback)  # no token: the state admits it


async def wait_for(host: Host, status: str) -> dict[str, Any]:
    for _ in range(200):
        info = await host.server_info()
        if info["status"] == status:
            return info
        await asyncio.sleep(0.05)
    raise AssertionError(f"still {info}")


async def test_authorize_through_the_callback_then_the_tool_runs(
    tmp_path: Path, protected: tuple[str, Provider]
) -> None:
    url, provider = protected
    make = host_factory(tmp_path, url)
    async for host in make():
        assert (await host.server_info())["status"] == "pending"
        events = await host.run("r1")  # does not wait for the person
        assert events[-1]["type"] == "RUN_FINISHED"
        assert not any(e["type"] == "TOOL_CALL_START" for e in events)
        info = await host.server_info()
        assert info["status"] == "needs_authorization" and info["tools"] == 0
        authorization_url = info["authorizationUrl"]
        assert authorization_url.startswith(url.removesuffix("/mcp") + "/authorize?")

        unknown = await host.http.get("/gth/oauth/callback?code=x&state=nope")
        assert unknown.status_code == 400 and unknown.json()["code"] == "oauth_state_unknown"

        page = await authorize(host, authorization_url)
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "You can close this tab" in page.text and "<script" not in page.text
        info = await wait_for(host, "ok")
        assert info["tools"] == 1 and "authorizationUrl" not in info

        events = await host.run("r2")  # the tool list is rebuilt with the server's tool
        result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
        assert "5" in result["content"]
        assert events[-1]["type"] == "RUN_FINISHED"
        agents = (await host.http.get("/gth/info", headers=AUTH)).json()["agents"]
        assert "mcp__secure__secret_add" in agents[0]["tools"]

    token_file = owner_dir(tmp_path / "oauth", server_owner()) / "secure.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.parent.stat().st_mode) == 0o700
    saved = json.loads(token_file.read_text())
    assert saved["url"] == url and saved["tokens"]["access_token"] and saved["client_info"]
    assert provider.authorizations == 1

    # A fresh registry signs in with the stored token: no authorization asked.
    async for host in make():
        events = await host.run("r3")
        assert (await host.server_info())["status"] == "ok"
    assert provider.authorizations == 1

    # A token file of the single-user layout (before sign-ins were per user) is the token
    # holder's: it is moved to their directory and used, no authorization asked.
    legacy = tmp_path / "oauth" / "secure.json"
    token_file.rename(legacy)
    async for host in make():
        await host.run("r3b")
        assert (await host.server_info())["status"] == "ok"
    assert provider.authorizations == 1
    assert token_file.is_file() and not legacy.exists()

    # Deleting the file forces a new authorization.
    token_file.unlink()
    async for host in make():
        await host.run("r4")
        info = await host.server_info()
        assert info["status"] == "needs_authorization" and info["authorizationUrl"]


async def test_a_stdio_server_cannot_use_oauth(tmp_path: Path) -> None:
    cfg = config("http://unused")
    cfg["mcpServers"]["secure"] = {"transport": "stdio", "command": "x", "authProvider": "OAuth"}
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(cfg))
    registry = AgentRegistry(
        load_config(cwd=tmp_path, home=tmp_path),
        command="notebook",
        store=CheckpointStore("memory"),
        cwd=tmp_path,
        kernels=False,
    )
    await registry.start()
    assert registry.info()["mcp"]["servers"]["secure"]["status"] == "error"
    await registry.close()


async def test_token_storage_file_is_private_and_bound_to_its_url(tmp_path: Path) -> None:
    from mcp.shared.auth import OAuthToken

    path = tmp_path / "d" / "k.json"
    storage = FileTokenStorage(path, "http://a/mcp")
    assert await storage.get_tokens() is None
    await storage.set_tokens(OAuthToken(access_token="abc", token_type="Bearer"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert (await storage.get_tokens()).access_token == "abc"
    assert await FileTokenStorage(path, "http://b/mcp").get_tokens() is None


@pytest.mark.parametrize("known", [True, False])
async def test_callbacks_deliver_by_state(known: bool) -> None:
    callbacks = OAuthCallbacks()
    future = callbacks.expect("s1", "alice")
    delivered = callbacks.deliver("s1" if known else "s2", "code", "alice")
    assert delivered == ("delivered" if known else "unknown")
    await asyncio.sleep(0)
    assert future.done() is known


async def test_callbacks_refuse_a_state_another_user_started() -> None:
    callbacks = OAuthCallbacks()
    future = callbacks.expect("s1", "alice")
    assert callbacks.deliver("s1", "bobs-code", "bob") == "mismatch"
    assert callbacks.deliver("s1", "bobs-code", None) == "mismatch"
    await asyncio.sleep(0)
    assert not future.done()  # still Alice's to complete
    assert callbacks.deliver("s1", "alices-code", "alice") == "delivered"
    assert await future == "alices-code"


def test_each_user_has_a_directory_of_their_own(tmp_path: Path) -> None:
    names = ["alice", "Alice", "ALICE", "a b", "a_b", "../x", ".hidden", "", "a~b", "é"]
    dirs = [owner_dir(tmp_path, name) for name in names]
    assert len({str(d).lower() for d in dirs}) == len(names)  # even on a case-blind disk
    assert all(d.parent == tmp_path / "users" and d.name not in ("", ".", "..") for d in dirs)
    assert owner_dir(tmp_path, "alice").name == "alice"
