"""One PostgreSQL role and schema per user, so a shared database keeps users apart.

Every user's server holds its database URL, and that user's kernels run as the same user: the
URL must open that user's threads and nobody else's. :func:`provision_user` (run by the hub,
with a superuser URL, before each spawn) makes, idempotently:

- a ``LOGIN`` role ``gth_<user>`` with a fresh random password (rotated at every call, so a URL
  that leaked from an old server stops working at the next spawn);
- a schema of the same name, owned by the role, and the role's ``search_path`` set to it: the
  store's unqualified table names land there;
- no ``CREATE`` on schema ``public`` for ``PUBLIC``, so nobody shares tables by accident.

Other users' schemas grant nothing, so reading them is refused even by qualified name. The
password reaches the server only as a SCRAM verifier computed here (never in plain text, which
a statement log could keep). In a JupyterHub config::

    from gth_jupyter.store.provision import pre_spawn_hook
    c.Spawner.pre_spawn_hook = pre_spawn_hook()  # reads $GTH_JUPYTER_ADMIN_DATABASE_URL
    # (and $GTH_JUPYTER_ADMIN_REDIS_URL: a Redis user per user too, see redis_users)
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from psycopg import AsyncConnection, sql
from psycopg.conninfo import make_conninfo

from .postgres_env import ADMIN_REDIS_URL_VAR, ADMIN_URL_VAR, DATABASE_URL_VAR, REDIS_URL_VAR
from .roles import role_name

__all__ = ["pre_spawn_hook", "provision_user", "role_name"]

# Serialises provisioning across hub replicas: CREATE ROLE has no IF NOT EXISTS.
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('gth_jupyter:provision', 0))"


def _user_url(admin_url: str, role: str, password: str) -> str:
    """``admin_url`` (same host, port, database and options) as ``role``."""
    parts = urlsplit(admin_url)
    if parts.scheme not in ("postgres", "postgresql"):
        return make_conninfo(admin_url, user=role, password=password)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(role, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


async def provision_user(admin_url: str, username: str) -> str:
    """Creates or refreshes ``username``'s role and schema; returns the role's database URL
    (with a new password: the previous one stops working)."""
    role = role_name(username)
    password = secrets.token_urlsafe(32)
    ident = sql.Identifier(role)
    conn = await AsyncConnection.connect(admin_url, autocommit=True)
    try:
        verifier = conn.pgconn.encrypt_password(
            password.encode(), role.encode(), b"scram-sha-256"
        ).decode()
        async with conn.transaction():
            await conn.execute(_LOCK)
            cur = await conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
            verb = "ALTER" if await cur.fetchone() else "CREATE"
            # Nothing beyond logging in and owning its schema, whatever a previous role had.
            await conn.execute(
                sql.SQL(
                    verb + " ROLE {} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
                    "NOREPLICATION NOBYPASSRLS PASSWORD {}"
                ).format(ident, sql.Literal(verifier))
            )
            await conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(ident, ident)
            )
            await conn.execute(sql.SQL("ALTER SCHEMA {} OWNER TO {}").format(ident, ident))
            await conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(ident))
            await conn.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(ident, ident))
            await conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    finally:
        await conn.close()
    return _user_url(admin_url, role, password)


def pre_spawn_hook(
    admin_url: str | None = None, admin_redis_url: str | None = None
) -> Callable[[Any], Awaitable[None]]:
    """A JupyterHub ``Spawner.pre_spawn_hook`` that provisions the spawning user and hands the
    server its URL as ``$GTH_JUPYTER_DATABASE_URL`` (the server takes it out of its
    environment before any kernel starts). ``admin_url`` defaults to
    ``$GTH_JUPYTER_ADMIN_DATABASE_URL`` of the hub. Given ``admin_redis_url`` (default:
    ``$GTH_JUPYTER_ADMIN_REDIS_URL`` of the hub), it also gives the user a Redis user of their
    own (:mod:`.redis_users`) and the server that user's URL as ``$GTH_JUPYTER_REDIS_URL``,
    in place of any shared one."""

    async def hook(spawner: Any) -> None:
        admin = admin_url or os.environ.get(ADMIN_URL_VAR)
        if not admin:
            raise RuntimeError(f"gth-jupyter: set ${ADMIN_URL_VAR} for the hub")
        env = {DATABASE_URL_VAR: await provision_user(admin, spawner.user.name)}
        admin_redis = admin_redis_url or os.environ.get(ADMIN_REDIS_URL_VAR)
        if admin_redis:
            from .redis_users import provision_redis_user

            env[REDIS_URL_VAR] = await provision_redis_user(admin_redis, spawner.user.name)
        spawner.environment = {**(spawner.environment or {}), **env}

    return hook
