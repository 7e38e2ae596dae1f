"""One PostgreSQL role and schema per user, so a shared database keeps users apart.

Every user's server holds its database URL, and that user's kernels run as the same user: the
URL must open that user's threads and nobody else's. :func:`provision_user` (run by the hub,
with a superuser URL, before each spawn) makes, idempotently:

- a ``LOGIN`` role named :func:`~.roles.role_name` of the user (one per Hub name) with a fresh
  random password (rotated at every call, so a URL that leaked from an old server stops working
  at the next spawn), and the Hub name it belongs to as its comment (``COMMENT ON ROLE``, which
  only a role with ``CREATEROLE`` may set): provisioning refuses a role recorded for another
  name, or one without a record that is not provably this name's (:func:`~.roles.claim`),
  with a :class:`~.roles.RoleTakenError`;
- a schema of the same name, owned by the role, and the role's ``search_path`` set to it: the
  store's unqualified table names land there (a schema of that name another role owns is
  refused, not taken over);
- no ``CREATE`` on schema ``public`` for ``PUBLIC``, so nobody shares tables by accident.

A user's role under the old naming (:func:`~.roles.legacy_role_name`) is renamed to the new
name, with its schema and data, where that role can be no other user's; the others are carried
over by :func:`carry_over_roles` (``gth-jupyter db migrate-roles``), told every Hub user.

Other users' schemas grant nothing, so reading them is refused even by qualified name. The
password reaches the server only as a SCRAM verifier computed here (never in plain text, which
a statement log could keep). In a JupyterHub config::

    from gth_jupyter.store.provision import pre_spawn_hook
    c.Spawner.pre_spawn_hook = pre_spawn_hook()  # reads $GTH_JUPYTER_ADMIN_DATABASE_URL
    # (and $GTH_JUPYTER_ADMIN_REDIS_URL: a Redis user per user too, see redis_users)
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from psycopg import AsyncConnection, sql
from psycopg.conninfo import make_conninfo

from .postgres_env import ADMIN_REDIS_URL_VAR, ADMIN_URL_VAR, DATABASE_URL_VAR, REDIS_URL_VAR
from .roles import (
    Claim,
    Found,
    RoleTakenError,
    claim,
    legacy_role_name,
    role_name,
    shared_legacy_roles,
)

__all__ = [
    "RoleTakenError",
    "carry_over_roles",
    "owner_comment",
    "pre_spawn_hook",
    "provision_user",
    "role_name",
]

# Serialises provisioning across hub replicas: CREATE ROLE has no IF NOT EXISTS.
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('gth_jupyter:provision', 0))"
#: A role's comment names the Hub user it belongs to: this, then the name as a JSON string.
OWNER_MARK = "gth-jupyter user "


def owner_comment(username: str) -> str:
    """The comment of ``username``'s role: its owner record."""
    return OWNER_MARK + json.dumps(username)


def _owner(comment: str | None) -> str | None:
    """The Hub name ``comment`` records; ``None`` for no record, ``""`` for an unreadable one."""
    if comment is None or not comment.startswith(OWNER_MARK):
        return None
    try:
        owner = json.loads(comment[len(OWNER_MARK) :])
    except ValueError:
        return ""
    return owner if isinstance(owner, str) else ""


async def _found(conn: AsyncConnection[Any], role: str) -> Found | None:
    cur = await conn.execute(
        "SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = %s", (role,)
    )
    row = await cur.fetchone()
    return None if row is None else Found(_owner(row[0]))


async def _schema_owner(conn: AsyncConnection[Any], schema: str) -> str | None:
    cur = await conn.execute(
        "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s", (schema,)
    )
    row = await cur.fetchone()
    return None if row is None else str(row[0])


async def _claim(conn: AsyncConnection[Any], username: str, *, confirmed: bool) -> Claim:
    """Decides what provisioning ``username`` does with its role (see :func:`~.roles.claim`)
    and carries its old role over when that is the answer. Runs under :data:`_LOCK`, in the
    transaction of the rest."""
    role, legacy = role_name(username), legacy_role_name(username)
    at_legacy = await _found(conn, legacy) if legacy != role else None
    action = claim(username, await _found(conn, role), at_legacy, confirmed=confirmed)
    if action == "carry":
        # Ownership follows the role's oid: the schema and its tables stay the role's.
        await conn.execute(
            sql.SQL("ALTER ROLE {} RENAME TO {}").format(
                sql.Identifier(legacy), sql.Identifier(role)
            )
        )
        if await _schema_owner(conn, legacy) == role and await _schema_owner(conn, role) is None:
            await conn.execute(
                sql.SQL("ALTER SCHEMA {} RENAME TO {}").format(
                    sql.Identifier(legacy), sql.Identifier(role)
                )
            )
    schema_owner = await _schema_owner(conn, role)
    if schema_owner is not None and schema_owner != role:
        raise RoleTakenError(
            f"The schema {role} belongs to another role: it is not handed to {username!r}.",
            {"role": role, "user": username, "owner": schema_owner},
            code="schema_taken",
        )
    return action


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
    (with a new password: the previous one stops working). Raises
    :class:`~.roles.RoleTakenError` where the role is, or may be, another user's."""
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
            action = await _claim(conn, username, confirmed=False)
            verb = "CREATE" if action == "create" else "ALTER"
            # Nothing beyond logging in and owning its schema, whatever a previous role had.
            await conn.execute(
                sql.SQL(
                    verb + " ROLE {} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
                    "NOREPLICATION NOBYPASSRLS PASSWORD {}"
                ).format(ident, sql.Literal(verifier))
            )
            await conn.execute(
                sql.SQL("COMMENT ON ROLE {} IS {}").format(
                    ident, sql.Literal(owner_comment(username))
                )
            )
            await conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(ident, ident)
            )
            await conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(ident))
            await conn.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(ident, ident))
            await conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    finally:
        await conn.close()
    return _user_url(admin_url, role, password)


async def carry_over_roles(admin_url: str, usernames: Sequence[str]) -> dict[str, str]:
    """Carries the roles an older gth-jupyter made over to :func:`~.roles.role_name`, told
    ``usernames``: every user of the Hub. A name's old role is renamed (with its schema and
    data) and recorded as the name's where no other of ``usernames`` had the same old role;
    one that two of them shared is left alone. Passwords are not changed: the next
    provisioning sets them. Returns what was done for each name, a sentence."""
    names = [name for name in dict.fromkeys(usernames) if name]  # no Hub user is ''
    done = shared_legacy_roles(names)
    conn = await AsyncConnection.connect(admin_url, autocommit=True)
    try:
        # A name's new role may still be another name's old one, which has to move first:
        # a refusal is tried again while another name's carry-over makes progress.
        while pending := [n for n in names if n not in done]:
            refused: dict[str, RoleTakenError] = {}
            for name in pending:
                try:
                    done[name] = await _carry_over(conn, name)
                except RoleTakenError as exc:
                    refused[name] = exc
            if len(refused) == len(pending):
                done.update((n, f"refused ({e.code}): {e.message}") for n, e in refused.items())
    finally:
        await conn.close()
    return {name: done[name] for name in names}


async def _carry_over(conn: AsyncConnection[Any], username: str) -> str:
    role, legacy = role_name(username), legacy_role_name(username)
    ident = sql.Identifier(role)
    async with conn.transaction():
        await conn.execute(_LOCK)
        action = await _claim(conn, username, confirmed=True)
        if action == "create":
            return "nothing to carry over"
        if action == "keep":
            return f"already {role}"
        await conn.execute(
            sql.SQL("COMMENT ON ROLE {} IS {}").format(ident, sql.Literal(owner_comment(username)))
        )
        if action == "adopt":
            return f"recorded as the owner of {role}"
        await conn.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(ident, ident))
        return f"carried over from {legacy} to {role}"


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
