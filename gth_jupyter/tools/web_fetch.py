"""``gth_web_fetch``: the text of an http(s) URL.

Gaunt Sloth's tool takes the URL as its only argument (a bare string, which LangChain presents to
the model as ``{"input": url}``), sends ``Accept: text/*`` and returns the body. Its error texts
are kept: "Invalid URL provided", "URL must start with http:// or https://", "Failed to fetch data
from <url> with status: <code> - <reason>". Unlike Gaunt Sloth it bounds the fetch: ``timeout``
(ms, default 30000) and ``maxBytes`` (default 1000000) come from ``builtInTools.gth_web_fetch``;
a longer body is cut there with a marker saying so.

Stricter than Gaunt Sloth: it reaches only public addresses. Loopback, private, link-local and
the other special ranges are refused on the resolved address of every hop, redirects (at most 5)
are followed here so each hop is checked before anything is sent to it, and the connection goes
to the address that was checked (``net_guard``). ``builtInTools.gth_web_fetch.allowHosts`` opens
named hosts (exact names or ``*.`` suffixes) for users who fetch from their intranet on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from langchain_core.tools import BaseTool, ToolException
from pydantic import AliasChoices, BaseModel, Field

from gth_jupyter.tools._base import make_tool
from gth_jupyter.tools.net_guard import AddressRefused, GuardedTransport, HostPolicy

__all__ = ["DEFAULT_MAX_BYTES", "DEFAULT_TIMEOUT_MS", "fetch", "make_web_fetch_tool"]

DEFAULT_TIMEOUT_MS = 30_000
DEFAULT_MAX_BYTES = 1_000_000
MAX_REDIRECTS = 5

DESCRIPTION = (
    "Fetch the content of an HTTP or HTTPS URL and return it as text. The input is the URL."
)


class FetchArgs(BaseModel):
    input: str = Field(
        description="The http:// or https:// URL to fetch.",
        validation_alias=AliasChoices("input", "url"),
    )


def _checked_url(url: str) -> httpx.URL:
    """``url`` parsed, or Gaunt Sloth's error for a URL that is not http(s)."""
    try:
        parts = urlsplit(url)
        parsed = httpx.URL(url)
    except (ValueError, httpx.InvalidURL):
        raise ToolException("Invalid URL provided") from None
    if not parts.scheme or (not parts.netloc and parts.scheme in ("http", "https")):
        raise ToolException("Invalid URL provided")
    if parts.scheme not in ("http", "https") or not parsed.host:
        raise ToolException("URL must start with http:// or https://")
    return parsed


def _refusal(exc: AddressRefused, url: httpx.URL, came_from: httpx.URL | None) -> ToolException:
    what = f"fetch {url}" if came_from is None else f"follow the redirect from {came_from} to {url}"
    return ToolException(
        f"Refused to {what}: {exc} (rule: {exc.rule}). gth_web_fetch reaches only public "
        f'addresses; to fetch from this host on purpose, add "{url.host}" to '
        "builtInTools.gth_web_fetch.allowHosts."
    )


async def _fetch(url: httpx.URL, client: httpx.AsyncClient, max_bytes: int) -> str:
    came_from: httpx.URL | None = None
    for _ in range(MAX_REDIRECTS + 1):
        try:
            async with client.stream("GET", url, headers={"Accept": "text/*"}) as response:
                location = response.headers.get("Location")
                if response.is_redirect and location:
                    came_from, url = url, url.join(location)
                    if url.scheme not in ("http", "https") or not url.host:
                        raise ToolException(
                            f"Refused to follow the redirect from {came_from} to {url}: "
                            "URL must start with http:// or https://"
                        )
                    continue
                if not response.is_success:
                    raise ToolException(
                        f"Failed to fetch data from {url} with status: {response.status_code} - "
                        f"{response.reason_phrase}"
                    )
                return await _body(response, max_bytes)
        except AddressRefused as exc:
            raise _refusal(exc, url, came_from) from None
    raise ToolException(f"Failed to fetch data from {url}: more than {MAX_REDIRECTS} redirects")


async def _body(response: httpx.Response, max_bytes: int) -> str:
    body = bytearray()
    truncated = False
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            del body[max_bytes:]
            truncated = True
            break
    text = bytes(body).decode(response.encoding or "utf-8", "replace")
    if truncated:
        text += f"\n... [gth_web_fetch: response truncated at {max_bytes} bytes] ..."
    return text


async def fetch(
    url: str, *, timeout_ms: float, max_bytes: int, policy: HostPolicy | None = None
) -> str:
    """The body of ``url`` as text, at most ``max_bytes``; errors raise ``ToolException``.

    Redirects are followed here, not by httpx, so that every hop passes ``policy`` (see
    ``net_guard``) before anything is sent to it; the whole fetch shares one deadline.
    """
    url = url.strip()
    parsed = _checked_url(url)
    transport = GuardedTransport(policy or HostPolicy())
    seconds = timeout_ms / 1000
    try:
        async with httpx.AsyncClient(
            timeout=seconds, follow_redirects=False, transport=transport, trust_env=False
        ) as client:
            return await asyncio.wait_for(_fetch(parsed, client, max_bytes), seconds)
    except (httpx.TimeoutException, asyncio.TimeoutError):
        raise ToolException(
            f"Failed to fetch data from {url}: no complete answer within {seconds:g}s"
        ) from None
    except httpx.HTTPError as exc:
        raise ToolException(f"Failed to fetch data from {url}: {exc}") from None


def make_web_fetch_tool(settings: Mapping[str, Any]) -> BaseTool:
    timeout = float(settings.get("timeout") or DEFAULT_TIMEOUT_MS)
    max_bytes = int(settings.get("maxBytes") or DEFAULT_MAX_BYTES)
    policy = HostPolicy.of(settings.get("allowHosts"))

    async def gth_web_fetch(input: str) -> str:
        return await fetch(input, timeout_ms=timeout, max_bytes=max_bytes, policy=policy)

    return make_tool("gth_web_fetch", DESCRIPTION, FetchArgs, gth_web_fetch, "network")
