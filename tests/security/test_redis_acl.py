"""One Redis for every user of a Hub, without one user reaching another's runs.

Each user gets a Redis ACL user of their own (``gth-jupyter db provision``, the Hub's
``pre_spawn_hook``), whose keys are ``gth:{<role>}:*`` and whose commands are the journal's
alone. Against the real test Redis (7.0 here): user B's credentials, which B can always read in
B's own server, get ``NOPERM`` on A's run keys, read and write, and are refused ``SCAN``,
``KEYS``, ``ACL SETUSER``, ``MONITOR`` and ``CONFIG``; a journal running on A's credentials
works end to end; a user name full of glob characters widens no pattern.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import redis
from redis.exceptions import AuthenticationError, NoPermissionError

from gth_jupyter.runs.journal import RunInfo
from gth_jupyter.runs.journals import make_journals
from gth_jupyter.runs.redis_shipper import RedisJournals
from gth_jupyter.store.provision import pre_spawn_hook
from gth_jupyter.store.redis_users import journal_prefix, provision_redis_user
from gth_jupyter.store.roles import legacy_role_name, role_name

pytestmark = pytest.mark.timeout(60)


def frame(n: int) -> bytes:
    return b'data: {"n": %d}\n\n' % n


def framed(n: int) -> bytes:
    return b"id: %d\n" % n + frame(n)


class Users:
    """Users provisioned on the test Redis (ACL users outlive FLUSHALL: deleted afterwards)."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self.admin = redis.Redis.from_url(admin_url)
        self.names: list[str] = []

    async def provision(self, name: str) -> str:
        self.names.append(name)
        return await provision_redis_user(self.admin_url, name)

    def client(self, url: str) -> redis.Redis:
        return redis.Redis.from_url(url)

    def close(self) -> None:
        roles = {role_name(name) for name in self.names}
        if roles:
            self.admin.execute_command("ACL", "DELUSER", *roles)
        self.admin.close()


@pytest.fixture
def users(redis_url: str) -> Iterator[Users]:
    found = Users(redis_url)
    found.admin.execute_command("ACL", "LOG", "RESET")
    yield found
    found.close()


@pytest.fixture
def tag() -> str:
    return uuid.uuid4().hex[:6]


async def shipped(admin: redis.Redis, stream: str, n: int) -> None:
    """Waits until frame ``n`` is in ``stream``."""
    for _ in range(1500):
        if admin.xrange(stream, min=f"{n}-0", max=f"{n}-0"):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"frame {n} never reached {stream}")


@pytest.fixture
async def a_run(users: Users, tag: str) -> AsyncIterator[tuple[str, str, str]]:
    """User A's journal (on A's own credentials) with a run of three frames in Redis:
    (A's name, A's URL, the run's stream key)."""
    alice = f"alice{tag}"
    url = await users.provision(alice)
    journals = make_journals(url, owner=alice)
    journal = journals.open("r1", "t1", alice)
    for n in range(1, 4):
        journal.append(frame(n))
    stream = f"{journal_prefix(alice)}run:r1"
    await shipped(users.admin, stream, 3)
    yield alice, url, stream
    await journals.close()


async def test_another_users_credentials_get_noperm_on_a_users_keys_read_and_write(
    users: Users, tag: str, a_run: tuple[str, str, str]
) -> None:
    alice, _, stream = a_run
    b_url = await users.provision(f"bob{tag}")
    b = users.client(b_url)
    meta, live = f"{stream}:meta", f"{stream}:live"
    assert users.admin.exists(stream, meta, live) == 3
    reads: list[tuple[Any, ...]] = [
        ("XRANGE", stream, "-", "+"),
        ("XREAD", "STREAMS", stream, "0"),
        ("HGETALL", meta),
        ("EXISTS", live),
    ]
    writes: list[tuple[Any, ...]] = [
        ("XADD", stream, "4-0", "f", b"data: forged by bob\n\n"),
        ("HSET", meta, "owner", f"bob{tag}"),
        ("SET", live, "1"),
        ("PEXPIRE", stream, "1"),
        ("DEL", stream),
    ]
    for command in [*reads, *writes]:
        with pytest.raises(NoPermissionError):
            b.execute_command(*command)
    # Nor through the journal's own script, which runs with the caller's rights.
    sha = b.script_load("return redis.call('XADD', KEYS[1], '*', 'f', 'forged')")
    with pytest.raises(NoPermissionError):
        b.evalsha(sha, 1, stream)
    # A's run is as A's journal left it.
    assert [e[1][b"f"] for e in users.admin.xrange(stream)] == [framed(n) for n in (1, 2, 3)]
    assert users.admin.hget(meta, "owner") == alice.encode()
    b.close()

    # B's own journals, even told A's key prefix, neither find nor follow A's run.
    own = make_journals(b_url, owner=f"bob{tag}")
    assert await own.find("r1") is None
    posing = RedisJournals(b_url, prefix=journal_prefix(alice))
    with pytest.raises(NoPermissionError):
        await posing.find("r1")
    with pytest.raises(NoPermissionError):
        async for _ in posing.follow("r1", 0):
            pass
    await own.close()
    await posing.close()


async def test_a_users_credentials_are_refused_scan_keys_acl_monitor_and_config(
    users: Users, tag: str
) -> None:
    bob = f"bob{tag}"
    b = users.client(await users.provision(bob))
    before = users.admin.acl_getuser(role_name(bob))
    refused: list[tuple[Any, ...]] = [
        ("SCAN", "0"),
        ("KEYS", "*"),
        ("ACL", "SETUSER", role_name(bob), "~*", "+@all"),
        ("ACL", "WHOAMI"),
        ("MONITOR",),
        ("CONFIG", "GET", "*"),
        ("CONFIG", "SET", "maxmemory", "1"),
        ("FLUSHALL",),
        ("SCRIPT", "FLUSH"),
        ("PUBLISH", f"gth:{{{role_name(bob)}}}:x", "hi"),
        ("SUBSCRIBE", f"gth:{{{role_name(bob)}}}:x"),
        ("EVAL", "return 1", "0"),
    ]
    for command in refused:
        with pytest.raises(NoPermissionError):
            b.execute_command(*command)
    b.close()
    # Its rights are as provisioned: the ACL SETUSER above changed nothing.
    assert users.admin.acl_getuser(role_name(bob)) == before


async def test_a_journal_on_the_users_own_credentials_works_end_to_end(
    users: Users, tag: str
) -> None:
    alice = f"alice{tag}"
    url = await users.provision(alice)
    # Two of A's servers: one runs the run, the other re-attaches to it.
    here, there = make_journals(url, owner=alice), make_journals(url, owner=alice)
    journal = here.open("r1", "t1", alice)
    for n in range(1, 21):
        journal.append(frame(n))
    stream = f"gth:{{{role_name(alice)}}}:run:r1"  # the documented key layout
    await shipped(users.admin, stream, 20)
    assert await there.find("r1") == RunInfo("r1", "t1", alice, ended=False)

    async def collect(last_id: int) -> list[bytes]:
        return [f async for batch in there.follow("r1", last_id) for f in batch]

    from_start = asyncio.create_task(collect(0))  # catches up, then waits on XREAD
    from_middle = asyncio.create_task(collect(15))
    await shipped(users.admin, stream, 20)
    for n in range(21, 41):
        journal.append(frame(n))
    journal.end()
    here.closed(journal)
    assert await asyncio.wait_for(from_start, 30) == [framed(n) for n in range(1, 41)]
    assert await asyncio.wait_for(from_middle, 30) == [framed(n) for n in range(16, 41)]
    # Re-attaching after the end, from the other server.
    assert await collect(38) == [framed(39), framed(40)]
    assert await there.find("r1") == RunInfo("r1", "t1", alice, ended=True)
    await here.close()
    await there.close()
    keys = sorted(k.decode() for k in users.admin.keys("gth:*"))
    assert keys == [stream, f"{stream}:meta"]  # the live key went with the run's end
    # Nothing the journal sent was refused (a refusal it retried would not fail a step above).
    log = users.admin.execute_command("ACL", "LOG")
    assert [entry for entry in log if _field(entry, "username") == role_name(alice)] == []


def _field(entry: Any, name: str) -> Any:
    if isinstance(entry, dict):
        return entry.get(name, entry.get(name.encode()))
    pairs = dict(zip(entry[::2], entry[1::2], strict=True))
    value = pairs.get(name.encode(), pairs.get(name))
    return value.decode() if isinstance(value, bytes) else value


@pytest.mark.parametrize("name", ["a*", "a?b", "[x]", "*", "a\\*", "{a}", "gth_a}:*"])
async def test_a_user_name_with_glob_characters_cannot_widen_the_pattern(
    users: Users, name: str
) -> None:
    victims = ("a", "ab", "axb", "x")
    for victim in victims:
        users.admin.set(f"{journal_prefix(victim)}run:r1", "secret")
    client = users.client(await users.provision(name))
    role = role_name(name)
    assert re.fullmatch(r"gth_[a-z0-9_]+", role)
    assert users.admin.acl_getuser(role)["keys"] == [f"~gth:{{{role}}}:*"]
    for victim in victims:
        with pytest.raises(NoPermissionError):
            client.get(f"{journal_prefix(victim)}run:r1")
    own = f"{journal_prefix(name)}run:r1"
    client.set(own, "mine")
    assert users.admin.get(own) == b"mine"
    # The name the old naming gave the same user (its old role spelt as a name) has a user of
    # its own, and neither provisioning resets the other's.
    twin = legacy_role_name(name).removeprefix("gth_")
    assert legacy_role_name(twin) == legacy_role_name(name)
    twin_client = users.client(await users.provision(twin))
    assert role_name(twin) != role and client.exists(own) == 1
    with pytest.raises(NoPermissionError):
        twin_client.get(own)
    twin_client.close()
    client.close()


async def test_provisioning_again_rotates_the_password(users: Users, tag: str) -> None:
    alice = f"alice{tag}"
    first = await users.provision(alice)
    second = await users.provision(alice)
    assert first != second
    with pytest.raises(AuthenticationError):  # the old URL no longer opens
        users.client(first).ping()
    client = users.client(second)
    assert client.set(f"{journal_prefix(alice)}run:x", "1")
    client.close()


async def test_the_hub_hook_hands_each_server_only_its_own_redis_url(
    users: Users, pg_url: str, tag: str
) -> None:
    class Spawner:  # the part of a JupyterHub spawner the hook uses
        def __init__(self, name: str) -> None:
            self.user = type("User", (), {"name": name})()
            self.environment = {"GTH_JUPYTER_REDIS_URL": users.admin_url, "KEPT": "1"}

    hook = pre_spawn_hook(pg_url, users.admin_url)
    alice, bob = Spawner(f"alice{tag}"), Spawner(f"bob{tag}")
    users.names += [alice.user.name, bob.user.name]
    await hook(alice)
    await hook(bob)
    assert alice.environment["KEPT"] == "1"
    a_url, b_url = (s.environment["GTH_JUPYTER_REDIS_URL"] for s in (alice, bob))
    assert users.admin_url not in (a_url, b_url) and a_url != b_url
    a, b = users.client(a_url), users.client(b_url)
    a_key = f"{journal_prefix(alice.user.name)}run:r1"
    a.set(a_key, "1")
    with pytest.raises(NoPermissionError):
        b.get(a_key)
    a.close()
    b.close()
    _drop_roles(pg_url, alice.user.name, bob.user.name)


def test_the_cli_provisions_the_redis_user_too(users: Users, pg_url: str, tag: str) -> None:
    alice = f"alice{tag}"
    users.names.append(alice)
    env = {
        "GTH_JUPYTER_ADMIN_DATABASE_URL": pg_url,
        "GTH_JUPYTER_ADMIN_REDIS_URL": users.admin_url,
        "PATH": "/usr/bin:/bin",
    }
    command = [sys.executable, "-m", "gth_jupyter.server.cli", "db", "provision", alice]
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    database, redis_line = out.stdout.split()
    assert database.startswith("postgresql://") and redis_line.startswith("redis://")
    client = users.client(redis_line)
    client.set(f"{journal_prefix(alice)}run:r1", "1")
    with pytest.raises(NoPermissionError):
        client.execute_command("SCAN", "0")
    client.close()
    _drop_roles(pg_url, alice)
    # Redis alone (no database to provision): one line, the Redis URL.
    del env["GTH_JUPYTER_ADMIN_DATABASE_URL"]
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(f"redis://{role_name(alice)}:")


def _drop_roles(pg_url: str, *names: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(pg_url, autocommit=True) as conn:
        for name in names:
            role = sql.Identifier(role_name(name))
            conn.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(role))
            conn.execute(sql.SQL("DROP ROLE {}").format(role))


async def test_a_user_of_a_redis_url_naming_another_database_may_select_it(
    users: Users, tag: str
) -> None:
    base, _, _ = users.admin_url.rpartition("/")
    users.admin_url = f"{base}/3"
    alice = f"alice{tag}"
    client = users.client(await users.provision(alice))  # connecting selects database 3
    client.set(f"{journal_prefix(alice)}run:r1", "1")
    client.close()
    other = redis.Redis.from_url(f"{base}/3")
    assert other.get(f"{journal_prefix(alice)}run:r1") == b"1"
    other.close()
