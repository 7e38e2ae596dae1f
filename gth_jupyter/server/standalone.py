"""``gth-jupyter serve``: the same routes for AG-UI clients outside Jupyter.

Bound to loopback by default and always behind a token (``Authorization: token T`` or
``Bearer T``), with CORS headers from ``commands.api.cors``. Gaunt Sloth's clients post to
``/agents/{name}/run``; the ``/gth/...`` paths match the Jupyter extension's.
"""

from __future__ import annotations

import hmac
from typing import Any

from tornado import web

from ..config import EffectiveConfig
from .agents import AgentRegistry
from .routes import MAX_BODY_KEY, REGISTRY_KEY, GthRoutesMixin

TOKEN_KEY = "gth_token"
CORS_KEY = "gth_cors"


class StandaloneHandler(GthRoutesMixin):
    """Token auth and CORS for every route; preflight needs no token."""

    def set_default_headers(self) -> None:
        cors = self.settings.get(CORS_KEY) or {}
        for header, value in cors.items():
            self.set_header(header, value)

    def prepare(self) -> None:
        if self.request.method == "OPTIONS":
            return
        expected: str = self.settings[TOKEN_KEY]
        header = self.request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() not in ("token", "bearer") or not hmac.compare_digest(
            given.strip().encode(), expected.encode()
        ):
            self.set_header("WWW-Authenticate", 'Token realm="gth-jupyter"')
            self.send_json(
                401,
                {
                    "code": "unauthorized",
                    "message": "A valid token is required: send 'Authorization: token <T>'.",
                },
            )

    def options(self, *args: Any) -> None:
        self.set_status(204)
        self.finish()


class HealthHandler(StandaloneHandler):
    def get(self) -> None:
        self.write_health()


class InfoHandler(StandaloneHandler):
    def get(self) -> None:
        self.write_info()


class RunHandler(StandaloneHandler):
    async def post(self, name: str) -> None:
        await self.run_agent(name)


class ThreadHandler(StandaloneHandler):
    async def get(self, thread_id: str) -> None:
        await self.write_thread(thread_id)


class NotFoundHandler(StandaloneHandler):
    def get(self, *args: Any) -> None:
        self.send_json(404, {"code": "not_found", "message": "There is no such route."})

    post = get


def cors_headers(effective: EffectiveConfig) -> dict[str, str]:
    cors = effective.cors
    allow_headers = [h.strip() for h in cors.allow_headers.split(",") if h.strip()]
    if not any(h.lower() == "authorization" for h in allow_headers):
        allow_headers.append("Authorization")  # the token travels in it
    return {
        "Access-Control-Allow-Origin": cors.allow_origin,
        "Access-Control-Allow-Methods": cors.allow_methods,
        "Access-Control-Allow-Headers": ", ".join(allow_headers),
    }


def make_app(registry: AgentRegistry, *, token: str, max_body_bytes: int) -> web.Application:
    if not token:
        raise ValueError("The standalone server needs a token.")
    settings: dict[str, Any] = {
        REGISTRY_KEY: registry,
        MAX_BODY_KEY: max_body_bytes,
        TOKEN_KEY: token,
        CORS_KEY: cors_headers(registry.effective),
        "default_handler_class": NotFoundHandler,
    }
    run = r"/agents/([^/]+)/run"
    return web.Application(
        [
            (r"/health", HealthHandler),
            (r"/info", InfoHandler),
            (run, RunHandler),
            (r"/gth/health", HealthHandler),
            (r"/gth/info", InfoHandler),
            (r"/gth" + run, RunHandler),
            (r"/gth/threads/([^/]+)", ThreadHandler),
        ],
        **settings,
    )
