"""Jupyter server handlers: the shared routes behind Jupyter's auth (token or cookie + XSRF)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from .routes import GthRoutesMixin

AUTH_RESOURCE = "gth"


class GthAPIHandler(GthRoutesMixin, APIHandler):
    auth_resource = AUTH_RESOURCE


class HealthHandler(GthAPIHandler):
    @web.authenticated
    @authorized
    def get(self) -> None:
        self.write_health()


class InfoHandler(GthAPIHandler):
    @web.authenticated
    @authorized
    def get(self) -> None:
        self.write_info()


class ThreadHandler(GthAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        await self.write_thread(thread_id)


class RunHandler(GthAPIHandler):
    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        await self.run_agent(name)
