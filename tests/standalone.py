"""The standalone AG-UI server in the test's own event loop, on a configuration folder: the
configuration file → ``AgentRegistry`` (threads in memory) → ``make_app`` → a loopback port the
kernel picked → an ``httpx`` client on it. Stopped, and the registry closed (its MCP sessions
too), when the test is done."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import load_config
from gth_jupyter.server.standalone import make_app
from gth_jupyter.store import CheckpointStore


@dataclass
class Standalone:
    """A running server: its client (``base_url`` set), registry and port."""

    http: httpx.AsyncClient
    registry: AgentRegistry
    port: int


@contextlib.asynccontextmanager
async def standalone(
    folder: Path,
    config: Mapping[str, Any],
    *,
    token: str,
    command: str = "notebook",
    timeout: float = 30,
    **registry_options: Any,
) -> AsyncIterator[Standalone]:
    """``config`` written to ``folder/.gsloth.config.json`` and loaded as the server does;
    ``command`` ``notebook`` answers approvals (``api`` refuses them); ``registry_options`` go
    to ``AgentRegistry`` (``kernels``, ``mcp_timeout``, ``mcp_oauth_dir``)."""
    (folder / ".gsloth.config.json").write_text(json.dumps(config))
    registry = AgentRegistry(
        load_config(cwd=folder, home=folder),
        command=command,
        store=CheckpointStore("memory"),
        cwd=folder,
        **registry_options,
    )
    # Port 0 bound here, not a port found free and bound later: parallel test workers cannot
    # take it in between.
    sockets = bind_sockets(0, address="127.0.0.1")
    server = HTTPServer(make_app(registry, token=token, max_body_bytes=1_000_000))
    server.add_sockets(sockets)
    port = int(sockets[0].getsockname()[1])
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=timeout) as http:
            yield Standalone(http, registry, port)
    finally:
        server.stop()
        await registry.close()
