"""MCP servers in the Jupyter server extension: a run calls an MCP tool, ``gth/info`` reports
every server (a broken one with its error), and stopping the extension ends the sessions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sse import sse_events

SERVER = str(Path(__file__).with_name("mcp_server.py"))


@pytest.fixture
def gth_config(jp_root_dir: Path) -> dict[str, Any]:
    call = {"name": "mcp__local__add", "args": {"a": 20, "b": 22}}
    return {
        "llm": {"type": "fake", "responses": [{"toolCalls": [call]}, "It is 42."]},
        "builtInTools": [],
        "mcpServers": {
            "local": {"transport": "stdio", "command": sys.executable, "args": [SERVER]},
            "broken": {"transport": "stdio", "command": str(jp_root_dir / "missing-server")},
        },
    }


async def test_a_run_calls_an_mcp_tool_and_info_reports_the_servers(jp_fetch, jp_serverapp) -> None:
    body = {
        "threadId": "t",
        "runId": "r",
        "protocolVersion": "1.0",
        "messages": [{"id": "u", "role": "user", "content": "add"}],
    }
    response = await jp_fetch(
        "gth", "agents", "default", "run", method="POST", body=json.dumps(body)
    )
    events = sse_events(response.body)
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert "42" in result["content"]
    assert events[-1]["type"] == "RUN_FINISHED"

    info = json.loads((await jp_fetch("gth", "info")).body)
    servers = info["mcp"]["servers"]
    assert servers["local"]["status"] == "ok" and servers["local"]["tools"] > 0
    assert servers["broken"]["status"] == "error" and servers["broken"]["error"]
    assert any("'broken'" in n for n in info["mcp"]["notices"])

    (extension,) = [
        e
        for pkg in jp_serverapp.extension_manager.extensions.values()
        for e in pkg.extension_points.values()
        if e.app is not None and hasattr(e.app, "registry")
    ]
    registry = extension.app.registry
    await extension.app.stop_extension()
    assert registry.mcp.info()["local"]["status"] == "pending"
