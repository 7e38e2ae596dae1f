"""MCP tools end to end through ``gth-jupyter serve``: listed in ``GET /info``, called by a run,
gated by a ``hint`` entry in ``manual`` mode, a broken server skipped beside working ones."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from gth_jupyter.agent import AgentRegistry
from tests.sse import sse_events as parse_sse
from tests.standalone import standalone

from .mcp_server import serve_http

TOKEN = "t0ken-t0ken-t0ken"
AUTH = {"Authorization": f"token {TOKEN}"}
SERVER = str(Path(__file__).with_name("mcp_server.py"))
READ_ONLY = {"readOnlyHint": True}


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"name": tool, "args": args}


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, AgentRegistry]]:
    async with serve_http() as url:
        config = {
            "llm": {
                "type": "fake",
                "responses": [
                    {
                        "toolCalls": [
                            call("mcp__local__add", a=2, b=3),
                            call("mcp__web__add", a=4, b=5),
                        ]
                    },
                    {"toolCalls": [call("mcp__local__remove_item", name="x")]},
                    "Done.",
                ],
            },
            "approvals": {
                "mode": "manual",
                "allow": [
                    {"type": "mcpTool", "server": "*", "matcher": "hint", "pattern": READ_ONLY}
                ],
            },
            "mcpServers": {
                "local": {"transport": "stdio", "command": sys.executable, "args": [SERVER]},
                "web": {"transport": "http", "url": url},
                "broken": {
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": ["-c", "import sys; sys.exit(3)"],
                },
            },
        }
        options = {"kernels": False, "mcp_timeout": 20}
        async with standalone(tmp_path, config, token=TOKEN, timeout=60, **options) as served:
            yield served.http, served.registry


async def run(http: httpx.AsyncClient, run_id: str, **extra: Any) -> list[dict[str, Any]]:
    body = {
        "threadId": "t",
        "runId": run_id,
        "protocolVersion": "1.0",
        "messages": [{"id": "u1", "role": "user", "content": "add, then remove"}],
        **extra,
    }
    response = await http.post("/agents/default/run", headers=AUTH, json=body)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


async def test_mcp_tools_run_end_to_end_and_ask_by_hint(served) -> None:
    http, _ = served
    before = (await http.get("/info", headers=AUTH)).json()
    assert {s["status"] for s in before["mcp"]["servers"].values()} == {"pending"}

    events = await run(http, "r1")
    results = {e["toolCallId"]: e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"}
    assert any("5" in c for c in results.values())  # the stdio server's add ran, unasked
    assert any("9" in c for c in results.values())  # the HTTP server's add too
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"  # remove_item is destructive: manual mode asks
    (interrupt,) = outcome["interrupts"]
    assert interrupt["reason"] == "confirmation"
    assert "mcp__local__remove_item" in interrupt["message"]

    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    events = await run(http, "r2", resume=resume)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"]["type"] == "success"
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert "removed x" in result["content"]

    info = (await http.get("/info", headers=AUTH)).json()
    servers = info["mcp"]["servers"]
    assert servers["local"]["status"] == "ok" and servers["web"]["status"] == "ok"
    assert servers["broken"]["status"] == "error" and servers["broken"]["error"]
    assert [n for n in info["mcp"]["notices"] if "'broken'" in n]
    (agent,) = info["agents"]
    assert {"mcp__local__add", "mcp__web__add", "mcp__local__remove_item"} <= set(agent["tools"])
    assert not any(t.startswith("mcp__broken__") for t in agent["tools"])
