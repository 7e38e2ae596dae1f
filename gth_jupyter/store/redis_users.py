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

An ACL user has no description to say whose it is, so its rules carry the record: one channel
pattern, ``&gth-owner:<the Hub name's UTF-8 in hex>``, inert (the user may run no Pub/Sub
command) and settable only with ``ACL SETUSER``, which no user may run. Provisioning refuses an
ACL user recorded for another name, or one without a record that is not provably this name's
(:func:`~.roles.claim`), with a :class:`~.roles.RoleTakenError`; it carries a user's ACL user
under the old naming (:func:`~.roles.legacy_role_name`) over to the new name where it can be no
other user's, moving its keys to the new hash tag and deleting the old ACL user (and with it
the old password); :func:`carry_over_redis_users` (``gth-jupyter db migrate-roles``) carries
the others over, told every Hub user. Provisionings take turns on a lock key, ``gth-admin:lock``
(outside every user's keys), so none sees another's half-done.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

from .roles import (
    Claim,
    Found,
    RoleTakenError,
    claim,
    legacy_role_name,
    role_name,
    shared_legacy_roles,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = [
    "JOURNAL_COMMANDS",
    "acl_rules",
    "carry_over_redis_users",
    "journal_prefix",
    "owner_rule",
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
_OWNER = "&gth-owner:"
_LOCK_KEY = "gth-admin:lock"
_LOCK_MS = 30_000


def journal_prefix(owner: str) -> str:
    """The prefix of ``owner``'s journal keys: ``gth:{<role>}:``."""
    return f"gth:{{{role_name(owner)}}}:"


def owner_rule(username: str) -> str:
    """The ACL rule that records ``username`` as the owner of its ACL user."""
    return _OWNER + username.encode("utf-8", "surrogatepass").hex()


def _found(info: dict[str, Any] | None) -> Found | None:
    """What ``ACL GETUSER`` said of a user, as its owner record."""
    if info is None:
        return None
    for channel in info.get("channels") or []:
        text = channel.decode() if isinstance(channel, bytes) else str(channel)
        if text.startswith(_OWNER):
            try:
                return Found(bytes.fromhex(text[len(_OWNER) :]).decode("utf-8", "surrogatepass"))
            except ValueError:
                return Found("")
    return Found(None)


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
        owner_rule(username),  # hex alone: no glob; no Pub/Sub command may use it
        "-@all",
        *(f"+{command}" for command in commands),
    ]


def _user_url(admin_url: str, user: str, password: str) -> str:
    """``admin_url`` (same scheme, host, port, database and options) as ``user``."""
    parts = urlsplit(admin_url)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(user, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _client(admin_url: str) -> Redis:
    try:
        from redis.asyncio import Redis
    except ImportError as exc:
        raise ImportError(
            "Redis users need the redis package: pip install 'gth-jupyter[redis]'"
        ) from exc
    return Redis.from_url(admin_url)


@contextlib.asynccontextmanager
async def _turn(client: Redis) -> AsyncIterator[None]:
    """Holds the provisioning lock (another hub replica may be provisioning)."""
    token = secrets.token_hex(16)
    deadline = time.monotonic() + _LOCK_MS / 1000
    while not await client.set(_LOCK_KEY, token, nx=True, px=_LOCK_MS):
        if time.monotonic() > deadline:
            raise TimeoutError(f"gth-jupyter: {_LOCK_KEY} stayed held for {_LOCK_MS} ms")
        await asyncio.sleep(0.02)
    try:
        yield
    finally:
        if await client.get(_LOCK_KEY) == token.encode():
            await client.delete(_LOCK_KEY)


async def _claim(client: Redis, username: str, *, confirmed: bool) -> tuple[Claim, int]:
    """Decides what provisioning ``username`` does with its ACL user (see
    :func:`~.roles.claim`) and, to carry the old one over, moves its keys to the new hash tag
    and deletes it; returns the decision and the keys moved. Runs holding :func:`_turn`."""
    user, legacy = role_name(username), legacy_role_name(username)
    at_legacy = _found(await client.acl_getuser(legacy)) if legacy != user else None
    action = claim(username, _found(await client.acl_getuser(user)), at_legacy, confirmed=confirmed)
    moved = 0
    if action == "carry":
        from redis.exceptions import ResponseError

        # First the old user (and its connections) goes, so nothing writes under the old tag
        # while its keys move.
        await client.acl_deluser(legacy)
        old, new = f"gth:{{{legacy}}}:", f"gth:{{{user}}}:"
        async for key in client.scan_iter(match=f"{old}*", count=1000):
            name = key.decode() if isinstance(key, bytes) else str(key)
            with contextlib.suppress(ResponseError):  # expired since the scan
                await client.rename(name, new + name[len(old) :])
                moved += 1
    return action, moved


async def provision_redis_user(admin_url: str, username: str) -> str:
    """Creates or resets ``username``'s Redis user; returns its URL (with a new password: the
    previous one stops working). Raises :class:`~.roles.RoleTakenError` where the ACL user
    is, or may be, another user's."""
    client = _client(admin_url)
    user = role_name(username)
    password = secrets.token_urlsafe(32)
    digest = hashlib.sha256(password.encode()).hexdigest()
    select = int(client.connection_pool.connection_kwargs.get("db") or 0) != 0
    send: Callable[..., Awaitable[Any]] = client.execute_command  # (untyped in redis-py)
    try:
        async with _turn(client):
            await _claim(client, username, confirmed=False)
            await send("ACL", "SETUSER", user, *acl_rules(username, digest, select=select))
    finally:
        await client.aclose()
    return _user_url(admin_url, user, password)


async def carry_over_redis_users(admin_url: str, usernames: Sequence[str]) -> dict[str, str]:
    """:func:`~.provision.carry_over_roles` for Redis: ACL users an older gth-jupyter made,
    with their keys, move to the new names, told every Hub user; an old one two of them shared
    is left alone. The carried-over user gets its ACL user (and a password) at its next
    provisioning. Returns what was done for each name, a sentence."""
    names = [name for name in dict.fromkeys(usernames) if name]  # no Hub user is ''
    done = shared_legacy_roles(names)
    client = _client(admin_url)
    send: Callable[..., Awaitable[Any]] = client.execute_command  # (untyped in redis-py)
    try:
        while pending := [n for n in names if n not in done]:
            refused: dict[str, RoleTakenError] = {}
            for name in pending:
                try:
                    async with _turn(client):
                        action, moved = await _claim(client, name, confirmed=True)
                        if action == "adopt":
                            await send("ACL", "SETUSER", role_name(name), owner_rule(name))
                except RoleTakenError as exc:
                    refused[name] = exc
                    continue
                done[name] = {
                    "create": "nothing to carry over",
                    "keep": f"already {role_name(name)}",
                    "adopt": f"recorded as the owner of {role_name(name)}",
                    "carry": f"carried over from {legacy_role_name(name)} to {role_name(name)} "
                    f"({moved} keys moved)",
                }[action]
            if len(refused) == len(pending):
                done.update((n, f"refused ({e.code}): {e.message}") for n, e in refused.items())
    finally:
        await client.aclose()
    return {name: done[name] for name in names}
