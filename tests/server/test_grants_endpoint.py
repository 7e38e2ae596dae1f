"""Standing approvals over HTTP: granted from an approval, listed, used, revoked; auth and 404.

The standalone server runs the whole flow; the Jupyter extension serves the same routes behind
Jupyter's auth.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from tornado.httpclient import HTTPClientError

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.server.host import HOST_KEY
from tests.sse import sse_events as parse_sse
from tests.standalone import standalone

TOKEN = "t0ken-t0ken-t0ken"
AUTH = {"Authorization": f"token {TOKEN}"}

SHELL = {"name": "run_shell_command", "args": {"command": "echo granted >> out.txt"}}


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Path]]:
    config = {
        "llm": {
            "type": "fake",
            "responses": [{"toolCalls": [SHELL]}, "Finished.", {"toolCalls": [SHELL]}, "Again."],
        },
        "builtInTools": {"run_shell_command": True},
        "approvals": "manual",
    }
    async with standalone(tmp_path, config, token=TOKEN) as served:
        yield served.http, tmp_path


async def run(http: httpx.AsyncClient, run_id: str, message: str, **extra: Any) -> list[Any]:
    body = {
        "threadId": "t",
        "runId": run_id,
        "protocolVersion": "1.0",
        "messages": [{"id": message, "role": "user", "content": "write the file"}],
        **extra,
    }
    response = await http.post("/gth/agents/default/run", headers=AUTH, json=body)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


async def test_always_allow_then_the_second_call_runs_without_asking(served) -> None:
    http, root = served
    events = await run(http, "r1", "u1")
    (interrupt,) = events[-1]["outcome"]["interrupts"]
    assert interrupt["responseSchema"]["properties"]["grant"]["enum"] == ["thread", "session"]
    answer = {"approved": True, "grant": "thread"}
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": answer}]
    events = await run(http, "r2", "u1", resume=resume)
    assert events[-1]["outcome"]["type"] == "success"

    listed = await http.get("/gth/threads/t/grants", headers=AUTH)
    assert listed.status_code == 200
    (grant,) = listed.json()["grants"]
    assert grant["scope"] == "thread" and grant["kind"] == "shell"
    assert grant["label"] == "echo granted >> out.txt"
    assert isinstance(grant["createdAt"], int)
    other = await http.get("/gth/threads/elsewhere/grants", headers=AUTH)
    assert other.json() == {"grants": []}  # a thread grant stays in its thread

    events = await run(http, "r3", "u2")  # the same command again: no question
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"]["type"] == "success"
    assert (root / "out.txt").read_text().split() == ["granted", "granted"]

    gone = await http.delete(f"/gth/grants/{grant['id']}", headers=AUTH)
    assert gone.status_code == 204
    assert (await http.get("/gth/threads/t/grants", headers=AUTH)).json() == {"grants": []}
    again = await http.delete(f"/gth/grants/{grant['id']}", headers=AUTH)
    assert again.status_code == 404 and again.json()["code"] == "grant_not_found"


async def test_the_grant_routes_need_the_token(served) -> None:
    http, _ = served
    listed = await http.get("/gth/threads/t/grants")
    assert listed.status_code == 401 and listed.json()["code"] == "unauthorized"
    revoked = await http.delete("/gth/grants/abc", headers={"Authorization": "token wrong"})
    assert revoked.status_code == 401


# -- the Jupyter extension ---------------------------------------------------------------------


async def test_jupyter_lists_and_revokes_grants(jp_fetch, jp_serverapp) -> None:
    registry: AgentRegistry = jp_serverapp.web_app.settings[HOST_KEY].registry
    assert registry.grants is not None
    mine = registry.grants.add("thread", "t1", ("shell", "ls"), "run_shell_command")
    shared = registry.grants.add("session", None, ("tool", "web_fetch"), "web_fetch")
    body = json.loads((await jp_fetch("gth", "threads", "t1", "grants")).body)
    assert [g["id"] for g in body["grants"]] == [mine.id, shared.id]
    body = json.loads((await jp_fetch("gth", "threads", "t2", "grants")).body)
    assert [g["id"] for g in body["grants"]] == [shared.id]
    response = await jp_fetch("gth", "grants", mine.id, method="DELETE")
    assert response.code == 204
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("gth", "grants", mine.id, method="DELETE")
    assert info.value.code == 404
    assert json.loads(info.value.response.body)["code"] == "grant_not_found"
    registry.grants.revoke(shared.id)


@pytest.mark.parametrize(
    ("route", "method"),
    [(("gth", "threads", "t1", "grants"), "GET"), (("gth", "grants", "x"), "DELETE")],
)
async def test_jupyter_grant_routes_need_auth(jp_fetch, route, method) -> None:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(*route, method=method, headers={"Authorization": ""})
    assert info.value.code in (401, 403)
