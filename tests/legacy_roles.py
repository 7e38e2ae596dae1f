"""What an older gth-jupyter left in a shared PostgreSQL and Redis, and the clean-up of what a
test makes there.

:func:`old_provision` and :func:`old_redis_user` make a user's role and ACL user as
gth-jupyter's ``provision_user`` and ``provision_redis_user`` did before roles were one per name:
under :func:`~gth_jupyter.store.roles.legacy_role_name`, with no owner record. Roles and ACL
users are the whole server's, not one database's: :class:`Made` drops the ones a test names
before it starts (left by an interrupted run) and after it ends.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import redis
from psycopg import sql

from gth_jupyter.store.redis_users import JOURNAL_COMMANDS
from gth_jupyter.store.roles import legacy_role_name, role_name


def _as(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{parts.netloc.rpartition('@')[2]}"
    return urlunsplit(parts._replace(netloc=netloc))


def old_provision(admin_url: str, username: str) -> str:
    """``username``'s role and schema as the old ``provision_user`` made them; its URL."""
    role = legacy_role_name(username)
    ident = sql.Identifier(role)
    password = secrets.token_urlsafe(16)
    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        verb = "ALTER" if exists else "CREATE"
        conn.execute(
            sql.SQL(verb + " ROLE {} WITH LOGIN NOSUPERUSER NOCREATEDB PASSWORD {}").format(
                ident, sql.Literal(password)
            )
        )
        conn.execute(
            sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(ident, ident)
        )
        conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(ident))
        conn.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(ident, ident))
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    return _as(admin_url, role, password)


def old_redis_user(admin_url: str, username: str) -> str:
    """``username``'s ACL user as the old ``provision_redis_user`` made it; its URL."""
    user = legacy_role_name(username)
    password = secrets.token_urlsafe(16)
    digest = hashlib.sha256(password.encode()).hexdigest()
    rules = ["reset", "on", f"#{digest}", f"~gth:{{{user}}}:*", "resetchannels", "-@all"]
    commands = [*JOURNAL_COMMANDS, "select"]
    with redis.Redis.from_url(admin_url) as client:
        client.execute_command("ACL", "SETUSER", user, *rules, *(f"+{c}" for c in commands))
    return _as(admin_url, user, password)


class Made:
    """The roles and ACL users of some user names, under both namings: dropped now and by
    :meth:`drop`."""

    def __init__(self, pg_url: str | None, redis_url: str | None, names: Iterable[str]) -> None:
        self.pg_url, self.redis_url = pg_url, redis_url
        self.roles: set[str] = set()
        self.add(*names)
        self.drop()

    def add(self, *names: str) -> None:
        self.roles |= {role(name) for name in names for role in (role_name, legacy_role_name)}

    def drop(self) -> None:
        if self.pg_url and self.roles:
            with psycopg.connect(self.pg_url, autocommit=True) as conn:
                for role in sorted(self.roles):
                    if conn.execute(
                        "SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)
                    ).fetchone():
                        conn.execute(
                            sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(role))
                        )
                        conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
        if self.redis_url and self.roles:
            with redis.Redis.from_url(self.redis_url) as client:
                client.execute_command("ACL", "DELUSER", *sorted(self.roles))
