"""Several users on one real Jupyter server: an identity provider that names the requester."""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User


class HeaderIdentity(IdentityProvider):
    """Token auth as usual; the user is the one the ``X-Test-User`` header names."""

    async def get_user(self, handler: Any) -> User | None:
        user = await super().get_user(handler)
        name = handler.request.headers.get("X-Test-User")
        return User(username=name) if user is not None and name else user
