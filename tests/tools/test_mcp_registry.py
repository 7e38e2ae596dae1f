"""MCP servers in the agent registry and the approvals gate: allowedTools, modes, hints, close."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.config.schema import ApprovalsConfig, McpServerConfig
from gth_jupyter.middleware.approval_policy import decide
from gth_jupyter.middleware.approval_rules import names_subject
from gth_jupyter.store import CheckpointStore
from gth_jupyter.tools.kinds import kind_of
from gth_jupyter.tools.mcp.servers import McpServers
from tests.helpers import free_port

SERVER = str(Path(__file__).with_name("mcp_server.py"))
LOCAL = {"transport": "stdio", "command": sys.executable, "args": [SERVER]}


def registry(tmp_path: Path, **config: Any) -> AgentRegistry:
    body = {"llm": {"type": "fake", "responses": ["ok"]}, **config}
    return AgentRegistry(
        GthConfig.model_validate(body),
        command="notebook",
        store=CheckpointStore("memory"),
        cwd=tmp_path,
        kernels=False,
    )


async def test_allowed_tools_empty_contacts_no_server(tmp_path: Path) -> None:
    touch = ["-c", f"open({str(tmp_path / 'touched')!r}, 'w').close()"]
    servers = {"s": {"transport": "stdio", "command": sys.executable, "args": touch}}
    agents = registry(tmp_path, mcpServers=servers, allowedTools=[])
    try:
        runtime = await agents.runtime()
        assert runtime is not None and agents.mcp is None and "mcp" not in agents.info()
        assert agents.parts is not None and agents.parts.tools == []
        assert not (tmp_path / "touched").exists()
    finally:
        await agents.close()


async def test_allowed_tools_filter_mcp_tools_by_their_prefixed_names(tmp_path: Path) -> None:
    agents = registry(tmp_path, mcpServers={"local": LOCAL}, allowedTools=["mcp__local__ad*"])
    try:
        await agents.runtime()
        assert agents.parts is not None
        assert [t.name for t in agents.parts.tools] == ["mcp__local__add"]
        info = agents.info()
        assert info["mcp"]["servers"]["local"]["status"] == "ok"
        assert info["mcp"]["notices"] == []
    finally:
        await agents.close()
    assert agents.info()["mcp"]["servers"]["local"]["status"] == "pending"


def verdict(approvals: Any, tool: Any) -> str:
    subject = names_subject(tool.name, None, tool.metadata["annotations"])
    config = ApprovalsConfig.model_validate(approvals)
    return decide(config, subject, kind_of(tool)).action


async def test_modes_and_hint_entries_gate_mcp_tools(tmp_path: Path) -> None:
    servers = McpServers({"local": McpServerConfig.model_validate(LOCAL)}, cwd=tmp_path)
    try:
        tools = {t.name: t for t in await servers.start()}
        add, remove = tools["mcp__local__add"], tools["mcp__local__remove_item"]
        assert verdict("assisted", add) == "run" and verdict("assisted", remove) == "run"
        assert verdict("manual", add) == "ask" and verdict("write", remove) == "ask"
        read_only = {"type": "mcpTool", "server": "local", "matcher": "hint"}
        allow = {"mode": "manual", "allow": [{**read_only, "pattern": {"readOnlyHint": True}}]}
        assert verdict(allow, add) == "run" and verdict(allow, remove) == "ask"
        other = {"mode": "manual", "allow": [{**allow["allow"][0], "server": "elsewhere"}]}
        assert verdict(other, add) == "ask"
        deny = {"mode": "write", "deny": [{**read_only, "pattern": {"destructiveHint": True}}]}
        assert verdict(deny, remove) == "deny" and verdict(deny, add) == "ask"
    finally:
        await servers.close()


def test_close_from_another_loop_ends_the_sessions(tmp_path: Path) -> None:
    """A notebook session closes its registry with asyncio.run on a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        servers = McpServers({"local": McpServerConfig.model_validate(LOCAL)}, cwd=tmp_path)
        started = asyncio.run_coroutine_threadsafe(servers.start(), loop).result(30)
        assert started and servers.info()["local"]["status"] == "ok"
        asyncio.run(servers.close())
        assert servers.info()["local"] == {"status": "pending", "tools": 0}
        assert not servers._tasks
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_an_unreachable_url_is_reported(tmp_path: Path, transport: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    config = McpServerConfig.model_validate({"transport": transport, "url": url})
    servers = McpServers({"down": config}, cwd=tmp_path, timeout=10)
    try:
        assert await servers.start() == []
        info = servers.info()["down"]
        assert info["status"] == "error" and info["error"]
    finally:
        await servers.close()
