"""Where a host finds the shared database and Redis: the environment, never a project file.

The URLs carry credentials. A ``.gsloth.config.json`` sits in a project anyone may have
written, and flags show in every user's process list, so the hosts read
``$GTH_JUPYTER_DATABASE_URL`` and ``$GTH_JUPYTER_REDIS_URL`` (or their own server settings) and
then take both out of ``os.environ``: the kernels, shell tools and MCP servers a host starts
inherit its environment. The host also marks itself non-dumpable, so that a process of the same
user (the kernel) cannot read them back from ``/proc/<pid>/environ``. Nothing here imports the
``postgres`` extra, so a host can say it is missing instead of failing to import.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

__all__ = [
    "ADMIN_REDIS_URL_VAR",
    "ADMIN_URL_VAR",
    "DATABASE_URL_VAR",
    "REDIS_URL_VAR",
    "ServiceUrls",
    "postgres_missing",
    "take_service_urls",
]

DATABASE_URL_VAR = "GTH_JUPYTER_DATABASE_URL"
REDIS_URL_VAR = "GTH_JUPYTER_REDIS_URL"
#: The superuser URL ``gth-jupyter db provision`` uses (a hub's, never a user server's).
ADMIN_URL_VAR = "GTH_JUPYTER_ADMIN_DATABASE_URL"
#: The Redis URL allowed to run ``ACL SETUSER``, with which ``gth-jupyter db provision`` (and the
#: Hub's ``pre_spawn_hook``) gives each user a Redis user of their own; likewise a hub's only.
ADMIN_REDIS_URL_VAR = "GTH_JUPYTER_ADMIN_REDIS_URL"

_POSTGRES_MODULES = ("psycopg", "psycopg_pool", "langgraph.checkpoint.postgres")


@dataclass(frozen=True)
class ServiceUrls:
    """The URLs found in the environment (``None`` for an unset or empty variable)."""

    database: str | None
    redis: str | None

    @property
    def any(self) -> bool:
        return bool(self.database or self.redis)


def take_service_urls() -> ServiceUrls:
    """Reads both URLs and removes them from ``os.environ`` (so no child inherits them); the
    caller marks the process non-dumpable when :attr:`ServiceUrls.any`."""
    database = os.environ.pop(DATABASE_URL_VAR, None) or None
    redis = os.environ.pop(REDIS_URL_VAR, None) or None
    return ServiceUrls(database, redis)


def postgres_missing() -> str | None:
    """Why the ``postgres`` checkpointer cannot load here, or ``None`` when it can."""
    for module in _POSTGRES_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            return (
                f"The postgres checkpointer needs the '{module}' module: install the extra, "
                "pip install 'gth-jupyter[postgres]'."
            )
    return None
