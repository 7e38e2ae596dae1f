"""MCP sign-ins are per user on a shared Jupyter server (two users named by the identity
provider, as under JupyterHub), against a real OAuth-protected MCP server.

Before, the OAuth ``state``, the tokens and the MCP session were the server's: ``gth/info``
showed Alice's pending authorization URL to Bob, Bob could complete it with his own account,
and Alice's next run then called the tool as Bob. Now each user's ``gth/info`` shows their own
sign-in alone, a callback with a ``state`` another user started is ``403
oauth_state_mismatch`` (nothing is stored; the sign-in stays its starter's), and a run uses its
own user's session: Alice's run never calls the tool with Bob's token.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import httpx
import pytest
import pytest_asyncio
from tornado.httpclient import HTTPClientError

from gth_jupyter.tools.mcp.oauth import owner_dir
from tests.sse import sse_events
from tests.tools.mcp_oauth_server import Provider, serve_protected
from tests.users import HeaderIdentity

CALL = {"toolCalls": [{"name": "mcp__secure__secret_add", "args": {"a": 20, "b": 22}}]}
#: One model reply per model call, in the order the runs below make them.
SCRIPT = [
    "Alice: not signed in yet.",
    "Bob: not signed in yet.",
    CALL,  # Alice's run, after Bob signed in: the tool must not run as Bob
    "Alice: done.",
    CALL,  # Bob's run: his own sign-in
    "Bob: done.",
    CALL,  # Alice's run, after her own sign-in
    "Alice: done again.",
]


@pytest_asyncio.fixture
async def protected() -> AsyncIterator[tuple[str, Provider]]:
    async with serve_protected() as served:
        yield served


@pytest.fixture
def gth_config(protected: tuple[str, Provider]) -> dict[str, Any]:
    url, _ = protected
    return {
        "llm": {"type": "fake", "responses": SCRIPT},
        "builtInTools": [],
        "approvals": "bypass",
        "mcpServers": {"secure": {"transport": "http", "url": url, "authProvider": "OAuth"}},
    }


@pytest.fixture
def gth_server_app() -> dict[str, Any]:
    return {"identity_provider_class": HeaderIdentity}


class Users:
    """Requests to the server as one user or another."""

    def __init__(self, jp_fetch: Any) -> None:
        self.fetch = jp_fetch

    async def get(self, user: str, *path: str, **kwargs: Any) -> Any:
        return await self.fetch("gth", *path, headers={"X-Test-User": user}, **kwargs)

    async def run(self, user: str, run_id: str) -> list[dict[str, Any]]:
        body = {
            "threadId": f"thread-{run_id}",
            "runId": run_id,
            "protocolVersion": "1.0",
            "messages": [{"id": f"u-{run_id}", "role": "user", "content": "add 20 and 22"}],
        }
        response = await self.get(
            user, "agents", "default", "run", method="POST", body=json.dumps(body)
        )
        events = sse_events(response.body)
        assert events[-1]["type"] == "RUN_FINISHED", events[-1]
        return events

    async def info(self, user: str) -> dict[str, Any]:
        return dict(json.loads((await self.get(user, "info")).body))

    async def secure(self, user: str) -> dict[str, Any]:
        return dict((await self.info(user))["mcp"]["servers"]["secure"])

    async def wait_for(self, user: str, status: str) -> dict[str, Any]:
        for _ in range(400):
            info = await self.secure(user)
            if info["status"] == status:
                return info
            await asyncio.sleep(0.05)
        raise AssertionError(f"{user}: still {info}")

    async def callback(self, user: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The callback as ``user``'s browser reaches it: status and JSON refusal (or {})."""
        try:
            response = await self.get(user, "oauth", "callback", params=query)
        except HTTPClientError as refused:
            assert refused.response is not None
            return refused.code, json.loads(refused.response.body)
        assert b"You can close this tab" in response.body
        return response.code, {}


async def log_in(provider: Provider, authorization_url: str, account: str) -> dict[str, str]:
    """The person opens the authorization URL and logs in as ``account``: the authorization
    server sends the browser back to the callback with this query."""
    provider.account = account
    async with httpx.AsyncClient(timeout=30) as browser:
        answer = await browser.get(authorization_url)
    assert answer.status_code in (302, 303, 307), answer.text
    return dict(parse_qsl(urlsplit(answer.headers["location"]).query))


def tool_result(events: list[dict[str, Any]]) -> str:
    return "".join(str(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT")


async def test_one_users_sign_in_is_never_anothers(
    jp_fetch: Any, protected: tuple[str, Provider]
) -> None:
    from jupyter_core.paths import jupyter_data_dir

    _, provider = protected
    users = Users(jp_fetch)
    oauth = Path(jupyter_data_dir()) / "gth_jupyter" / "mcp-oauth"

    # Alice's run starts her sign-in; gth/info shows her its URL.
    await users.run("alice", "a1")
    alice = await users.secure("alice")
    assert alice["status"] == "needs_authorization"
    alice_url = alice["authorizationUrl"]
    alice_state = parse_qs(urlsplit(alice_url).query)["state"][0]

    # Bob sees neither her URL nor its state.
    bob_view = (await users.get("bob", "info")).body.decode()
    assert alice_state not in bob_view and "authorizationUrl" not in bob_view
    assert (await users.secure("bob"))["status"] == "pending"

    # Bob, holding her link anyway, logs in with his account: the callback refuses him.
    query = await log_in(provider, alice_url, "bob-account")
    assert query["state"] == alice_state
    status, refusal = await users.callback("bob", query)
    assert (status, refusal["code"]) == (403, "oauth_state_mismatch")
    assert refusal["message"]
    # Nothing was stored for anyone, and the sign-in is still Alice's to complete.
    for holder in ("alice", "bob"):
        saved = owner_dir(oauth, holder) / "secure.json"
        assert not saved.exists() or "tokens" not in json.loads(saved.read_text())
    assert (await users.secure("alice"))["authorizationUrl"] == alice_url

    # Bob starts and completes his own sign-in; Alice is not shown his URL.
    await users.run("bob", "b1")
    bob_url = (await users.secure("bob"))["authorizationUrl"]
    assert bob_url != alice_url
    assert bob_url not in (await users.get("alice", "info")).body.decode()
    assert await users.callback("alice", await log_in(provider, bob_url, "alice-account")) == (
        403,
        {"code": "oauth_state_mismatch", "message": refusal["message"]},
    )
    assert (await users.callback("bob", await log_in(provider, bob_url, "bob-account")))[0] == 200
    await users.wait_for("bob", "ok")
    assert (await users.secure("alice"))["status"] == "needs_authorization"

    # Alice's next run: her model asks for the tool, which she has not signed in to. It must
    # not run as Bob (before the fix it did, with his token).
    events = await users.run("alice", "a2")
    assert provider.calls == []
    assert "42" not in tool_result(events)
    assert "mcp__secure__secret_add" not in (await users.info("alice"))["agents"][0]["tools"]

    # Bob's run calls it as Bob (the control: the tool does run when signed in).
    events = await users.run("bob", "b2")
    assert "42" in tool_result(events)
    assert provider.calls == ["bob-account"]

    # Alice signs in with her own account; her run calls the tool as her.
    query = await log_in(provider, alice_url, "alice-account")
    assert (await users.callback("alice", query))[0] == 200
    await users.wait_for("alice", "ok")
    events = await users.run("alice", "a3")
    assert "42" in tool_result(events)
    assert provider.calls == ["bob-account", "alice-account"]

    # Each user's tokens are in a 0600 file of their own.
    for holder in ("alice", "bob"):
        saved = owner_dir(oauth, holder) / "secure.json"
        assert saved.stat().st_mode & 0o777 == 0o600
        assert json.loads(saved.read_text())["tokens"]["access_token"]
