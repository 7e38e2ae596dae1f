"""Approvals end to end through the standalone endpoint: interrupt, then approve or reject."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from tests.sse import sse_events as parse_sse
from tests.standalone import standalone

TOKEN = "t0ken-t0ken-t0ken"  # the server refuses tokens under 16 characters
AUTH = {"Authorization": f"token {TOKEN}"}


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Path]]:
    shell_call = {"name": "run_shell_command", "args": {"command": "echo approved > out.txt"}}
    config = {
        "llm": {"type": "fake", "responses": [{"toolCalls": [shell_call]}, "Finished."]},
        "builtInTools": {"run_shell_command": True},
        "approvals": "manual",
    }
    # The notebook command answers approvals (the api command refuses them).
    async with standalone(tmp_path, config, token=TOKEN) as served:
        yield served.http, tmp_path


async def run(http: httpx.AsyncClient, run_id: str, **extra: Any) -> list[dict[str, Any]]:
    body = {
        "threadId": "t",
        "runId": run_id,
        "protocolVersion": "1.0",
        "messages": [{"id": "u1", "role": "user", "content": "write the file"}],
        **extra,
    }
    response = await http.post("/agents/default/run", headers=AUTH, json=body)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


async def suspended(http: httpx.AsyncClient, root: Path) -> dict[str, Any]:
    events = await run(http, "r1")
    outcome = events[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    assert interrupt["reason"] == "confirmation"
    assert "echo approved" in (interrupt.get("message") or json.dumps(interrupt))
    assert interrupt["responseSchema"]["required"] == ["approved"]
    assert not (root / "out.txt").exists()  # nothing ran before the answer
    return interrupt


async def test_an_approved_shell_command_runs(served) -> None:
    http, root = served
    interrupt = await suspended(http, root)
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    events = await run(http, "r2", resume=resume)
    assert events[-1]["type"] == "RUN_FINISHED" and events[-1]["outcome"]["type"] == "success"
    assert (root / "out.txt").read_text().strip() == "approved"
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert result["toolCallId"] == interrupt["toolCallId"]


async def test_a_rejected_shell_command_does_not_run(served) -> None:
    http, root = served
    interrupt = await suspended(http, root)
    answer = {"approved": False}
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": answer}]
    events = await run(http, "r2", resume=resume)
    assert events[-1]["type"] == "RUN_FINISHED"
    assert not (root / "out.txt").exists()
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert "reject" in result["content"].lower()
