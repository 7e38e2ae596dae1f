"""A small MCP server for the tests, written with the official ``mcp`` SDK (FastMCP).

``python mcp_server.py`` serves it over stdio; the tests serve its streamable HTTP
app on loopback themselves (``serve_http``). ``counter`` proves the session is long-lived: its
count grows only while one process keeps serving.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

LONG_NAME = "a_tool_whose_name_is_far_too_long_for_providers_once_it_is_prefixed_x"


def build_server() -> FastMCP:
    """A fresh server (a streamable HTTP session manager runs once per instance)."""
    server = FastMCP("gth-test", host="127.0.0.1", log_level="WARNING")
    count = 0

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
    def remove_item(name: str) -> str:
        """Remove an item (destructive)."""
        return f"removed {name}"

    @server.tool()
    def counter() -> int:
        """How many times this was called on this server (grows only in one session)."""
        nonlocal count
        count += 1
        return count

    @server.tool()
    def seen_env() -> str:
        """What the server sees of its environment (for the clean-environment test)."""
        names = ("GTH_MCP_SEEN", "GTH_MCP_HIDDEN", "JUPYTER_TOKEN")
        return ",".join(f"{k}={os.environ.get(k, '')}" for k in names)

    @server.tool()
    def pid() -> int:
        """This server's process id (to see that closing ends it)."""
        return os.getpid()

    @server.tool()
    def fail(why: str) -> str:
        """Always fails (an MCP error result)."""
        raise ValueError(f"failed: {why}")

    @server.tool()
    def exit_now() -> str:
        """Ends the server process at once (a server that dies mid-session)."""
        os._exit(1)

    @server.tool(name=LONG_NAME)
    def long_named() -> str:
        """A tool with a long name."""
        return "long"

    return server


@asynccontextmanager
async def serve_http(transport: str = "http") -> AsyncIterator[str]:
    """The server over streamable HTTP (or SSE) on a loopback port, in this loop; yields its
    URL."""
    import uvicorn

    from tests.helpers import free_port  # here: `python mcp_server.py` has no tests/ to import

    port = free_port()
    mcp = build_server()
    app = mcp.sse_app() if transport == "sse" else mcp.streamable_http_app()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    web = uvicorn.Server(config)
    task = asyncio.create_task(web.serve())
    while not web.started:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}"
    finally:
        web.should_exit = True
        await task
        await stop_sse_watcher()


async def stop_sse_watcher() -> None:
    """Ends the shutdown watcher sse-starlette starts once per thread in the first loop that
    serves a stream, and lets the next loop start its own. Left running, it outlives the test's
    loop and is reported as "Task was destroyed but it is pending" when the run ends."""
    from sse_starlette import sse

    watchers = [
        t
        for t in asyncio.all_tasks()
        if getattr(t.get_coro(), "__qualname__", "") == "_shutdown_watcher"
    ]
    for t in watchers:
        t.cancel()
    await asyncio.gather(*watchers, return_exceptions=True)
    sse._get_shutdown_state().watcher_started = False


if __name__ == "__main__":
    build_server().run("stdio")
