"""``gth_web_fetch``: the text of an http(s) URL.

Gaunt Sloth's tool takes the URL as its only argument (a bare string, which LangChain presents to
the model as ``{"input": url}``), sends ``Accept: text/*`` and returns the body. Its error texts
are kept: "Invalid URL provided", "URL must start with http:// or https://", "Failed to fetch data
from <url> with status: <code> - <reason>". Unlike Gaunt Sloth it bounds the fetch: ``timeout``
(ms, default 30000) and ``maxBytes`` (default 1000000) come from ``builtInTools.gth_web_fetch``;
a longer body is cut there with a marker saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from langchain_core.tools import BaseTool, ToolException
from pydantic import AliasChoices, BaseModel, Field

from gth_jupyter.tools._base import make_tool

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_TIMEOUT_MS", "fetch", "make_web_fetch_tool"]

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_MAX_BYTES = 1_000_000

DESCRIPTION = (
    "Fetch the content of an HTTP or HTTPS URL and return it as text. The input is the URL."
)


class FetchArgs(BaseModel):
    input: str = Field(
        description="The http:// or https:// URL to fetch.",
        validation_alias=AliasChoices("input", "url"),
    )


async def fetch(url: str, *, timeout_ms: float, max_bytes: int) -> str:
    """The body of ``url`` as text, at most ``max_bytes``; errors raise ``ToolException``."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ToolException("Invalid URL provided") from None
    if not parts.scheme or (not parts.netloc and parts.scheme in ("http", "https")):
        raise ToolException("Invalid URL provided")
    if parts.scheme not in ("http", "https"):
        raise ToolException("URL must start with http:// or https://")
    try:
        async with (
            httpx.AsyncClient(timeout=timeout_ms / 1000, follow_redirects=True) as client,
            client.stream("GET", url, headers={"Accept": "text/*"}) as response,
        ):
            if not response.is_success:
                raise ToolException(
                    f"Failed to fetch data from {url} with status: {response.status_code} - "
                    f"{response.reason_phrase}"
                )
            body = bytearray()
            truncated = False
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > max_bytes:
                    del body[max_bytes:]
                    truncated = True
                    break
            encoding = response.encoding or "utf-8"
    except httpx.TimeoutException:
        raise ToolException(
            f"Failed to fetch data from {url}: no complete answer within {timeout_ms / 1000:g}s"
        ) from None
    except httpx.HTTPError as exc:
        raise ToolException(f"Failed to fetch data from {url}: {exc}") from None
    text = bytes(body).decode(encoding, "replace")
    if truncated:
        text += f"\n... [gth_web_fetch: response truncated at {max_bytes} bytes] ..."
    return text


def make_web_fetch_tool(settings: Mapping[str, Any]) -> BaseTool:
    timeout = float(settings.get("timeout") or DEFAULT_TIMEOUT_MS)
    max_bytes = int(settings.get("maxBytes") or DEFAULT_MAX_BYTES)

    async def gth_web_fetch(input: str) -> str:
        return await fetch(input, timeout_ms=timeout, max_bytes=max_bytes)

    return make_tool("gth_web_fetch", DESCRIPTION, FetchArgs, gth_web_fetch, "network")
