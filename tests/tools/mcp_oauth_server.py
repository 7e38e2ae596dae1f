"""A protected MCP server for the OAuth tests: one FastMCP app on loopback that is both the
authorization server (``/.well-known/oauth-authorization-server``, ``/register``, ``/authorize``,
``/token``) and the resource server (``/mcp``, behind a bearer token), with the SDK's server-side
auth helpers. ``/authorize`` approves at once: it redirects straight back with a code, signed
in as :attr:`Provider.account` (the account the person would log in with), and the tool records
which account's token called it (:attr:`Provider.calls`)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.fastmcp import FastMCP
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from tests.helpers import free_port

from .mcp_server import stop_sse_watcher


@dataclass
class Provider:
    """An in-memory authorization server that approves every request."""

    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    tokens: dict[str, AccessToken] = field(default_factory=dict)
    authorizations: int = 0
    #: The account the next authorization signs in as.
    account: str = "someone"
    #: The account behind each code and each access token issued.
    accounts: dict[str, str] = field(default_factory=dict)
    #: The account whose token made each call of the tool, in order.
    calls: list[str] = field(default_factory=list)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        self.authorizations += 1
        code = secrets.token_urlsafe(16)
        self.accounts[code] = self.account
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        token = secrets.token_urlsafe(24)
        assert client.client_id is not None
        self.tokens[token] = AccessToken(
            token=token, client_id=client.client_id, scopes=authorization_code.scopes
        )
        self.accounts[token] = self.accounts.get(authorization_code.code, "?")
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.tokens.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.tokens.pop(token.token, None)


@asynccontextmanager
async def serve_protected() -> AsyncIterator[tuple[str, Provider]]:
    """The protected server on a loopback port, in this loop; yields its MCP URL and the
    authorization server's state."""
    import uvicorn

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    provider = Provider()
    server = FastMCP(
        "gth-oauth-test",
        host="127.0.0.1",
        log_level="WARNING",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(enabled=True),
        ),
    )

    @server.tool()
    def secret_add(a: int, b: int) -> int:
        """Add two integers (only for an authorized client)."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        caller = get_access_token()
        provider.calls.append(provider.accounts.get(caller.token, "?") if caller else "?")
        return a + b

    config = uvicorn.Config(
        server.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning"
    )
    web = uvicorn.Server(config)
    task = asyncio.create_task(web.serve())
    while not web.started:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    try:
        yield f"{base}/mcp", provider
    finally:
        web.should_exit = True
        await task
        await stop_sse_watcher()
