"""One Redis ACL user per user, so a Redis shared by a Hub's servers keeps users apart.

Every user's server holds its Redis URL, and that user's own code (a ``jupyter_server_config.py``,
a kernel of the same account) can get at it: the URL must open that user's run journals and
nobody else's. So a server's journal keys carry its owner inside a hash tag,
``gth:{<role>}:run:<run id>`` (and ``…:meta``, ``…:live``; see
:mod:`gth_jupyter.runs.redis_shipper`), where ``<role>`` is the owner's
:func:`~.roles.role_name`, the same name as their PostgreSQL role: only ``[a-z0-9_]``, so no user
name can put a glob character into the pattern below (and one user's keys share a Cluster slot).

:func:`provision_redis_user` (run by the hub, with a URL allowed to run ``ACL SETUSER``, before
each spawn) makes or resets the ACL user ``<role>`` with a fresh random password (rotated at
every call, like the database role's) and only::

    ~gth:{<role>}:*  (its own keys)   no channels   -@all +<JOURNAL_COMMANDS>

No ``KEYS``, ``SCAN``, ``MONITOR``, ``ACL``, ``CONFIG``, ``FLUSHALL`` or any other admin or
dangerous command, and no Pub/Sub (the journal uses none). The password reaches Redis only as its
SHA-256 (``#<hash>``), never in plain text.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from .roles import role_name

__all__ = [
    "JOURNAL_COMMANDS",
    "acl_rules",
    "journal_prefix",
    "provision_redis_user",
]

#: Every command the Redis journal sends, and those its shipping script runs (scripts run with
#: the caller's ACL): the ACL user may run these and nothing else. Keep it in step with
#: ``runs/redis_shipper.py`` (its tests run with exactly these rights).
JOURNAL_COMMANDS = (
    "script|load",  # loads the shipping script (not FLUSH or KILL: those reach other users)
    "evalsha",  # runs it: XADD, HSET, PEXPIRE, SET, DEL on the run's own keys
    "xadd",
    "hset",
    "pexpire",
    "set",
    "del",
    "hgetall",  # find(): the run's meta hash
    "exists",  # find() and followers: is the run's process alive
    "xrange",  # followers catching up
    "xread",  # followers waiting for frames
)


def journal_prefix(owner: str) -> str:
    """The prefix of ``owner``'s journal keys: ``gth:{<role>}:``."""
    return f"gth:{{{role_name(owner)}}}:"


def acl_rules(username: str, password_sha256: str, *, select: bool = False) -> list[str]:
    """The ``ACL SETUSER`` rules of the Redis user of ``username`` (a user name, not a role;
    ``select``: the URL names a database other than 0, which the client selects on
    connecting)."""
    commands = [*JOURNAL_COMMANDS, *(("select",) if select else ())]
    return [
        "reset",  # whatever the user had before: no other password, key, channel or command
        "on",
        f"#{password_sha256}",
        # The prefix's only glob character is this trailing one: a role is [a-z0-9_] alone.
        f"~{journal_prefix(username)}*",
        "resetchannels",
        "-@all",
        *(f"+{command}" for command in commands),
    ]


def _user_url(admin_url: str, user: str, password: str) -> str:
    """``admin_url`` (same scheme, host, port, database and options) as ``user``."""
    parts = urlsplit(admin_url)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


async def provision_redis_user(admin_url: str, username: str) -> str:
    """Creates or resets ``username``'s Redis user; returns its URL (with a new password: the
    previous one stops working)."""
    try:
        from redis.asyncio import Redis
    except ImportError as exc:
        raise ImportError(
            "Redis users need the redis package: pip install 'gth-jupyter[redis]'"
        ) from exc
    user = role_name(username)
    password = secrets.token_urlsafe(32)
    digest = hashlib.sha256(password.encode()).hexdigest()
    client = Redis.from_url(admin_url)
    select = int(client.connection_pool.connection_kwargs.get("db") or 0) != 0
    send: Callable[..., Awaitable[Any]] = client.execute_command  # (untyped in redis-py)
    try:
        await send("ACL", "SETUSER", user, *acl_rules(username, digest, select=select))
    finally:
        await client.aclose()
    return _user_url(admin_url, user, password)
