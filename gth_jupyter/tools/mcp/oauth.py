"""OAuth for MCP servers with ``authProvider: "OAuth"``, on the ``mcp`` SDK's client side.

Sign-ins are per user (the identity that owns threads): :class:`FileTokenStorage` keeps one
user's tokens and client registration for one server in one JSON file,
``<jupyter data dir>/gth_jupyter/mcp-oauth/users/<user>/<key>.json`` (:func:`user_token_file`),
created with mode 0600 (deleting it forces a new login). The single-user layout before it,
``mcp-oauth/<key>.json``, is moved into the server owner's directory on first use, so an
existing sign-in keeps working. :class:`OAuthCallbacks` holds the authorizations under way, by
``state``, each with the user who started it: the SDK's ``redirect_handler`` records the
authorization URL (which ``gth/info`` shows that user alone, for the widget's button) and its
``callback_handler`` waits for the code that the host's callback route
(``{base_url}gth/oauth/callback``) delivers with :meth:`OAuthCallbacks.deliver`, which refuses a
``state`` started by another user.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "CALLBACK_PATH",
    "Delivery",
    "FileTokenStorage",
    "OAuthCallbacks",
    "oauth_dir",
    "oauth_provider",
    "owner_dir",
    "token_file",
    "user_token_file",
]

#: The callback route, under the host's base URL.
CALLBACK_PATH = "gth/oauth/callback"
#: How long a started authorization waits for its callback.
DEFAULT_AUTHORIZATION_TIMEOUT = 15 * 60.0

_BAD = re.compile(r"[^A-Za-z0-9_.-]")
#: A user name used as its directory's name as it is: lower case (two names that differ only in
#: case would share a directory on a case-insensitive file system), no leading dot.
_PLAIN_OWNER = re.compile(r"^[a-z0-9_@-][a-z0-9_.@-]{0,99}$")

#: What :meth:`OAuthCallbacks.deliver` did with a code: handed it over; found no sign-in
#: waiting on the state; found one, started by another user (and left it waiting).
Delivery = Literal["delivered", "unknown", "mismatch"]


def oauth_dir(override: Path | None = None) -> Path:
    """Where the token files live: ``override``, else the Jupyter data directory's."""
    if override is not None:
        return override
    from jupyter_core.paths import jupyter_data_dir

    return Path(jupyter_data_dir()) / "gth_jupyter" / "mcp-oauth"


def token_file(directory: Path, key: str) -> Path:
    """The file of server ``key`` (its name cleaned to a safe file name)."""
    return directory / f"{_BAD.sub('_', key) or '_'}.json"


def owner_dir(directory: Path, owner: str) -> Path:
    """Where user ``owner``'s token files live, ``<directory>/users/<name>``. A user name that
    is not a plain lower-case file name is cleaned and tagged with a hash of it (after a ``~``,
    which a plain name never holds), so two users never share a directory."""
    if _PLAIN_OWNER.match(owner):
        name = owner
    else:
        digest = hashlib.sha256(owner.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{_BAD.sub('_', owner)[:48]}~{digest}"
    return directory / "users" / name


def user_token_file(directory: Path, owner: str, key: str, *, legacy: bool = False) -> Path:
    """User ``owner``'s file for server ``key``. With ``legacy`` (``owner`` is the user the
    server runs for), a file of the single-user layout, ``<directory>/<key>.json``, is moved
    there first when the user has none yet, so the sign-in made before keeps working."""
    path = token_file(owner_dir(directory, owner), key)
    old = token_file(directory, key)
    if legacy and not path.exists() and old.is_file():
        _private_dirs(path.parent)
        os.replace(old, path)
    return path


def _private_dirs(directory: Path) -> None:
    """``directory`` and its missing parents, each created with mode 0700."""
    missing: list[Path] = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)


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
        _private_dirs(self.path.parent)
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
    """The authorizations waiting for their callback, by ``state``, on one event loop; each
    remembers the user who started it (``None``: a host without users)."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str | None, asyncio.Future[str]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def expect(self, state: str, owner: str | None = None) -> asyncio.Future[str]:
        """A future that :meth:`deliver` resolves with the code for ``state``, which user
        ``owner`` started."""
        self._loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = self._loop.create_future()
        self._pending[state] = (owner, future)
        return future

    def forget(self, state: str) -> None:
        self._pending.pop(state, None)

    def deliver(self, state: str, code: str, owner: str | None = None) -> Delivery:
        """Hands ``code`` to the authorization with ``state`` when user ``owner`` started it
        (``delivered``); ``unknown`` when none waits for it; ``mismatch`` when another user
        started it, which goes on waiting for its own user's callback. Safe from another
        thread or loop than the one waiting."""
        pending = self._pending.get(state)
        if pending is None or self._loop is None:
            return "unknown"
        started_by, future = pending
        if started_by is not None and started_by != owner:
            return "mismatch"
        del self._pending[state]

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
        return "delivered"


def oauth_provider(
    *,
    url: str,
    storage: FileTokenStorage,
    callbacks: OAuthCallbacks,
    redirect_uri: str,
    on_authorization_url: Callable[[str], None],
    timeout: float = DEFAULT_AUTHORIZATION_TIMEOUT,
    owner: str | None = None,
) -> Any:
    """The SDK's ``OAuthClientProvider`` (an ``httpx.Auth``) for the server at ``url``, signing
    user ``owner`` in: its authorization URL goes to ``on_authorization_url``, its code comes
    from the callback route (within ``timeout`` seconds), from that user alone."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    waiting: dict[str, asyncio.Future[str]] = {}

    async def redirect_handler(authorization_url: str) -> None:
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        waiting.clear()
        waiting[state] = callbacks.expect(state, owner)
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
