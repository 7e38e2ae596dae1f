"""OAuth for MCP servers with ``authProvider: "OAuth"``, on the ``mcp`` SDK's client side.

:class:`FileTokenStorage` keeps a server's tokens and client registration in one JSON file,
``<jupyter data dir>/gth_jupyter/mcp-oauth/<key>.json``, created with mode 0600 (deleting it
forces a new login). :class:`OAuthCallbacks` holds the authorizations under way, by ``state``:
the SDK's ``redirect_handler`` records the authorization URL (which ``gth/info`` shows for the
widget's button) and its ``callback_handler`` waits for the code that the host's callback route
(``{base_url}gth/oauth/callback``) delivers with :meth:`OAuthCallbacks.deliver`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "CALLBACK_PATH",
    "FileTokenStorage",
    "OAuthCallbacks",
    "oauth_dir",
    "oauth_provider",
]

#: The callback route, under the host's base URL.
CALLBACK_PATH = "gth/oauth/callback"
#: How long a started authorization waits for its callback.
DEFAULT_AUTHORIZATION_TIMEOUT = 15 * 60.0

_BAD = re.compile(r"[^A-Za-z0-9_.-]")


def oauth_dir(override: Path | None = None) -> Path:
    """Where the token files live: ``override``, else the Jupyter data directory's."""
    if override is not None:
        return override
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "gth_jupyter" / "mcp-oauth"


def token_file(directory: Path, key: str) -> Path:
    """The file of server ``key`` (its name cleaned to a safe file name)."""
    return directory / f"{_BAD.sub('_', key) or '_'}.json"


class FileTokenStorage:
    """The SDK's ``TokenStorage`` on one JSON file, ``{"url", "tokens", "client_info"}``, written
    with mode 0600 in a 0700 directory. A file for another URL counts as empty."""

    def __init__(self, path: Path, url: str) -> None:
        self.path = path
        self.url = url

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("url") != self.url:
            return {}
        return data

    def _write(self, name: str, value: dict[str, Any]) -> None:
        data = self._read()
        data["url"] = self.url
        data[name] = value
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)
            json.dump(data, f)
        os.replace(tmp, self.path)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: Any) -> None:
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self._read().get("client_info")
        return OAuthClientInformationFull.model_validate(raw) if raw else None

    async def set_client_info(self, client_info: Any) -> None:
        self._write("client_info", client_info.model_dump(mode="json", exclude_none=True))


class OAuthCallbacks:
    """The authorizations waiting for their callback, by ``state``, on one event loop."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[str]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def expect(self, state: str) -> asyncio.Future[str]:
        """A future that :meth:`deliver` resolves with the code for ``state``."""
        self._loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = self._loop.create_future()
        self._pending[state] = future
        return future

    def forget(self, state: str) -> None:
        self._pending.pop(state, None)

    def deliver(self, state: str, code: str) -> bool:
        """Hands ``code`` to the authorization with ``state``; false when none waits for it.
        Safe from another thread or loop than the one waiting."""
        future = self._pending.pop(state, None)
        if future is None or self._loop is None:
            return False

        def resolve() -> None:
            if not future.done():
                future.set_result(code)

        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            resolve()
        else:
            self._loop.call_soon_threadsafe(resolve)
        return True


def oauth_provider(
    *,
    url: str,
    storage: FileTokenStorage,
    callbacks: OAuthCallbacks,
    redirect_uri: str,
    on_authorization_url: Callable[[str], None],
    timeout: float = DEFAULT_AUTHORIZATION_TIMEOUT,
) -> Any:
    """The SDK's ``OAuthClientProvider`` (an ``httpx.Auth``) for the server at ``url``: its
    authorization URL goes to ``on_authorization_url``, its code comes from the callback route
    (within ``timeout`` seconds)."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    waiting: dict[str, asyncio.Future[str]] = {}

    async def redirect_handler(authorization_url: str) -> None:
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        waiting.clear()
        waiting[state] = callbacks.expect(state)
        on_authorization_url(authorization_url)

    async def callback_handler() -> tuple[str, str | None]:
        ((state, future),) = waiting.items()
        try:
            code = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(
                f"the authorization was not completed within {timeout:g} s"
            ) from None
        finally:
            callbacks.forget(state)
            waiting.clear()
        return code, state

    metadata = OAuthClientMetadata(
        client_name="gth-jupyter",
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        timeout=timeout,
    )
