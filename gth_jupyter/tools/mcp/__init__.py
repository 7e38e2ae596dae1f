"""MCP servers as the agent's tools: ``mcpServers`` on ``langchain-mcp-adapters``.

:class:`McpServers` (``servers.py``) starts and holds the configured servers for a host, names
and gates their tools (kind ``mcp``); servers with ``authProvider: "OAuth"`` sign in through
:class:`OAuthCallbacks` (``oauth.py``), with tokens kept per user.

Loaded on first use: the ``mcp`` SDK is an extra, imported only when servers are configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .oauth import Delivery, OAuthCallbacks
    from .servers import McpServers, ServerState

__all__ = ["Delivery", "McpServers", "OAuthCallbacks", "ServerState"]

__getattr__ = lazy_names(
    __name__, oauth=("Delivery", "OAuthCallbacks"), servers=("McpServers", "ServerState")
)
