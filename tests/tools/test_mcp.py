"""MCP servers as tool sources: names, hints, long-lived sessions, skipped servers."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config.schema import McpServerConfig
from gth_jupyter.tools.mcp.servers import DEFAULT_HINTS, McpServers, mcp_tool_name

from .conftest import run_call
from .mcp_server import LONG_NAME, serve_http

SERVER = str(Path(__file__).with_name("mcp_server.py"))
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def stdio(**extra: Any) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"transport": "stdio", "command": sys.executable, "args": [SERVER], **extra}
    )


def by_name(servers: McpServers) -> dict[str, Any]:
    return {t.name: t for t in servers.tools}


def test_names_are_prefixed_and_capped() -> None:
    assert mcp_tool_name("web", "add") == "mcp__web__add"
    long = mcp_tool_name("web", LONG_NAME)
    assert NAME.match(long) and long.startswith("mcp__web__")
    assert long != mcp_tool_name("web", LONG_NAME + "y")
    odd = mcp_tool_name("my server", "do.it")
    assert NAME.match(odd) and odd.startswith("mcp__my_server__")
    assert NAME.match(mcp_tool_name("s" * 80, "t" * 80))


async def test_stdio_tools_are_listed_with_names_and_hints(tmp_path: Path) -> None:
    servers = McpServers({"local": stdio()}, cwd=tmp_path, timeout=30)
    try:
        await servers.start()
        tools = by_name(servers)
        assert {"mcp__local__add", "mcp__local__remove_item", "mcp__local__counter"} <= set(tools)
        add = tools["mcp__local__add"]
        assert add.metadata["mcp"] == {"server": "local", "tool": "add"}
        assert add.metadata["annotations"] == {
            **DEFAULT_HINTS,
            "readOnlyHint": True,
            "destructiveHint": False,  # undeclared: a read-only tool destroys nothing
            "openWorldHint": False,
        }
        assert tools["mcp__local__counter"].metadata["annotations"] == DEFAULT_HINTS
        (capped,) = [t for t in tools.values() if t.metadata["mcp"]["tool"] == LONG_NAME]
        assert NAME.match(capped.name)
        assert servers.info()["local"]["names"][capped.name] == LONG_NAME
        assert "5" in str(await add.ainvoke({"a": 2, "b": 3}))
        counter = tools["mcp__local__counter"]
        counts = [str(await counter.ainvoke({})) for _ in range(3)]
        assert ["1" in counts[0], "2" in counts[1], "3" in counts[2]] == [True] * 3
        assert servers.info()["local"]["status"] == "ok"
    finally:
        await servers.close()


async def test_a_stdio_child_gets_a_clean_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GTH_MCP_HIDDEN", "leak")
    monkeypatch.setenv("JUPYTER_TOKEN", "host-secret")
    servers = McpServers({"env": stdio(env={"GTH_MCP_SEEN": "yes"})}, cwd=tmp_path)
    try:
        await servers.start()
        seen = str(await by_name(servers)["mcp__env__seen_env"].ainvoke({}))
        assert "GTH_MCP_SEEN=yes" in seen
        assert "GTH_MCP_HIDDEN=," in seen and "JUPYTER_TOKEN=" in seen
        assert "host-secret" not in seen
    finally:
        await servers.close()


async def test_streamable_http_and_a_broken_server_beside_it(tmp_path: Path) -> None:
    async with serve_http() as url:
        configs = {
            "web": McpServerConfig.model_validate({"transport": "http", "url": url}),
            "broken": stdio(args=["-c", "import sys; sys.exit(3)"]),
            "missing": McpServerConfig.model_validate(
                {"transport": "stdio", "command": str(tmp_path / "no-such-server")}
            ),
            "oauth": McpServerConfig.model_validate(
                {"transport": "http", "url": url, "authProvider": "OAuth"}
            ),
        }
        servers = McpServers(configs, cwd=tmp_path, timeout=15)
        try:
            await servers.start()
            info = servers.info()
            assert info["web"]["status"] == "ok" and info["web"]["tools"] >= 4
            for key in ("broken", "missing", "oauth"):
                assert info[key]["status"] == "error" and info[key]["error"], key
            assert info["oauth"]["error"] == "OAuth is not supported yet"
            assert "process ended before it answered" in info["broken"]["error"]
            assert "FileNotFoundError" in info["missing"]["error"]
            assert {t.metadata["mcp"]["server"] for t in servers.tools} == {"web"}
            add = by_name(servers)["mcp__web__add"]
            assert "7" in str(await add.ainvoke({"a": 3, "b": 4}))
        finally:
            await servers.close()


async def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    hang = stdio(args=["-c", "import time; time.sleep(60)"])
    servers = McpServers({"slow": hang}, cwd=tmp_path, timeout=1)
    try:
        await servers.start()
        info = servers.info()["slow"]
        assert info["status"] == "error" and "within 1 s" in info["error"]
    finally:
        await servers.close()


async def test_a_failing_tool_and_a_dead_server_give_error_results(tmp_path: Path) -> None:
    servers = McpServers({"local": stdio()}, cwd=tmp_path)
    try:
        tools = await servers.start()
        failed = await run_call(tools, "mcp__local__fail", {"why": "on purpose"})
        assert failed.message.status == "error" and "on purpose" in str(failed.message.content)
        await run_call(tools, "mcp__local__exit_now", {})
        dead = await run_call(tools, "mcp__local__add", {"a": 1, "b": 2})
        assert dead.message.status == "error", dead.message
        assert "MCP server 'local' could not run 'add'" in str(dead.message.content)
    finally:
        await servers.close()


async def test_sse_transport(tmp_path: Path) -> None:
    async with serve_http("sse") as url:
        config = McpServerConfig.model_validate({"transport": "sse", "url": url})
        servers = McpServers({"old": config}, cwd=tmp_path, timeout=15)
        try:
            await servers.start()
            assert "11" in str(await by_name(servers)["mcp__old__add"].ainvoke({"a": 5, "b": 6}))
        finally:
            await servers.close()


async def test_close_ends_the_stdio_child(tmp_path: Path) -> None:
    servers = McpServers({"local": stdio()}, cwd=tmp_path)
    await servers.start()
    (block,) = await by_name(servers)["mcp__local__pid"].ainvoke({})
    pid = int(block["text"])
    os.kill(pid, 0)  # alive while the session is open
    await servers.close()
    with pytest.raises(ProcessLookupError):
        for _ in range(50):
            os.kill(pid, 0)
            await asyncio.sleep(0.1)


async def test_without_the_mcp_extra_every_server_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_mcp_adapters", None)
    servers = McpServers({"local": stdio()}, cwd=tmp_path)
    assert await servers.start() == []
    info = servers.info()["local"]
    assert info["status"] == "error" and "gth-jupyter[mcp]" in info["error"]
    await servers.close()
