"""An existing deployment keeps its users' data when role names become one per name.

What an older gth-jupyter made (:mod:`tests.legacy_roles`: roles, schemas and ACL users under the
old names, no owner record) is carried over: by the user's next provisioning where the old role
can be no other name's (a name of ``[a-z0-9_]`` without a hash-like ending), and by ``gth-jupyter
db migrate-roles``, told every Hub user, for the others. Against the real test PostgreSQL and
Redis: threads, checkpoints and run journals written under the old name are there under the new
one, and the old credentials open nothing any more.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator

import psycopg
import pytest
import redis
from langgraph.checkpoint.base import empty_checkpoint
from redis.exceptions import AuthenticationError

from gth_jupyter.runs.journal import RunInfo
from gth_jupyter.runs.journals import make_journals
from gth_jupyter.runs.redis_shipper import RedisJournals
from gth_jupyter.store.postgres import open_postgres
from gth_jupyter.store.provision import carry_over_roles, owner_comment, provision_user
from gth_jupyter.store.redis_users import (
    carry_over_redis_users,
    journal_prefix,
    provision_redis_user,
)
from gth_jupyter.store.roles import RoleTakenError, legacy_role_name, role_name
from tests.legacy_roles import Made, old_provision, old_redis_user

pytestmark = pytest.mark.timeout(120)
CONFIG = {"configurable": {"thread_id": "kept", "checkpoint_ns": ""}}


@pytest.fixture
def tag() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture
def made(pg_url: str, redis_url: str) -> Iterator[Made]:
    found = Made(pg_url, redis_url, ())
    yield found
    found.drop()


async def _write_thread(url: str, owner: str, thread: str = "kept") -> None:
    store = await open_postgres(url, lease_seconds=5)
    try:
        assert await store.threads.claim(thread, owner) == owner
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        await store.saver.aput(config, empty_checkpoint(), {}, {})
    finally:
        await store.close()


async def _threads(url: str, *threads: str) -> list[str | None]:
    """Each thread's owner as ``url`` sees it, and that its checkpoint is there."""
    store = await open_postgres(url, lease_seconds=5)
    try:
        owners = []
        for thread in threads:
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            owner = await store.threads.owner(thread)
            assert (await store.saver.aget_tuple(config) is None) == (owner is None)
            owners.append(owner)
        return owners
    finally:
        await store.close()


def _role(pg_url: str, role: str) -> tuple[str | None, list[str]] | None:
    """A role's comment and the schemas it owns, ``None`` where there is no such role."""
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_authid'), ARRAY(SELECT nspname FROM "
            "pg_namespace WHERE nspowner = r.oid ORDER BY 1) FROM pg_roles r WHERE rolname = %s",
            (role,),
        ).fetchone()
    return None if row is None else (row[0], list(row[1]))


async def _old_run(redis_url: str, old_url: str, name: str) -> None:
    """A run of three frames the old server journaled under the old hash tag, ended."""
    journals = RedisJournals(old_url, prefix=f"gth:{{{legacy_role_name(name)}}}:")
    journal = journals.open("r1", "t1", name)
    for n in range(1, 4):
        journal.append(b'data: {"n": %d}\n\n' % n)
    journal.end()
    journals.closed(journal)
    stream = f"gth:{{{legacy_role_name(name)}}}:run:r1"
    with redis.Redis.from_url(redis_url) as admin:
        for _ in range(1500):
            if admin.xrange(stream, min="3-1", max="3-1"):
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the old run never reached Redis")
    await journals.close()


async def test_a_plain_old_role_stays_with_its_data_and_is_recorded(
    pg_url: str, made: Made, tag: str
) -> None:
    alice = f"alice{tag}"
    made.add(alice)
    assert role_name(alice) == legacy_role_name(alice)
    await _write_thread(old_provision(pg_url, alice), alice)
    url = await provision_user(pg_url, alice)
    assert await _threads(url, "kept") == [alice]
    assert _role(pg_url, role_name(alice)) == (owner_comment(alice), [role_name(alice)])


async def test_an_old_role_only_its_user_can_have_moves_to_the_new_name_with_its_data(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    """``alice_smith…`` (no other name had ``gth_alice_smith…``): the next spawn renames the
    role and schema, and moves the run journals to the new hash tag."""
    name = f"alice_smith{tag}"
    made.add(name)
    old, new = legacy_role_name(name), role_name(name)
    assert old != new
    old_url = old_provision(pg_url, name)
    await _write_thread(old_url, name)
    old_redis = old_redis_user(redis_url, name)
    await _old_run(redis_url, old_redis, name)

    url = await provision_user(pg_url, name)
    assert await _threads(url, "kept") == [name]
    assert _role(pg_url, old) is None
    assert _role(pg_url, new) == (owner_comment(name), [new])
    with pytest.raises(psycopg.OperationalError):  # the old role is no more
        psycopg.connect(old_url).close()

    new_redis = await provision_redis_user(redis_url, name)
    journals = make_journals(new_redis, owner=name)
    assert await journals.find("r1") == RunInfo("r1", "t1", name, ended=True)
    frames = [f async for batch in journals.follow("r1", 1) for f in batch]
    assert frames == [b'id: %d\ndata: {"n": %d}\n\n' % (n, n) for n in (2, 3)]
    await journals.close()
    with redis.Redis.from_url(redis_url) as admin:
        assert admin.keys(f"gth:{{{old}}}:*") == []
        assert 0 < admin.pttl(f"{journal_prefix(name)}run:r1") <= 600_000  # its TTL kept
        assert admin.acl_getuser(old) is None
    with pytest.raises(AuthenticationError):
        redis.Redis.from_url(old_redis).ping()


def _cli(
    *args: str, pg_url: str, redis_url: str | None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {"GTH_JUPYTER_ADMIN_DATABASE_URL": pg_url, "PATH": "/usr/bin:/bin"}
    if redis_url:
        env["GTH_JUPYTER_ADMIN_REDIS_URL"] = redis_url
    return subprocess.run(
        [sys.executable, "-m", "gth_jupyter.server.cli", "db", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def _migrate(pg_url: str, redis_url: str, *names: str, stdin: str = "") -> tuple[int, list[str]]:
    out = _cli("migrate-roles", *names, pg_url=pg_url, redis_url=redis_url, stdin=stdin)
    assert out.stderr == ""
    return out.returncode, out.stdout.splitlines()


async def test_migrate_roles_carries_the_old_hashed_names_over(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    """Old roles of names with capitals, ``-``, ``.`` or ``@`` may be another name's too: the
    next spawn refuses them until an admin runs ``db migrate-roles`` with the Hub's users."""
    dave, erin = f"Dave-{tag}", f"erin.{tag}@example.com"
    made.add(dave, erin)
    for name in (dave, erin):
        await _write_thread(old_provision(pg_url, name), name)
        with redis.Redis.from_url(old_redis_user(redis_url, name)) as old:
            old.set(f"gth:{{{legacy_role_name(name)}}}:run:r1:live", "1")
        with pytest.raises(RoleTakenError) as refused:
            await provision_user(pg_url, name)
        assert refused.value.code == "role_migration_needed"
    out = _cli("provision", dave, pg_url=pg_url, redis_url=None)
    assert out.returncode == 1 and out.stdout == ""
    assert "role_migration_needed" in out.stderr and "db migrate-roles" in out.stderr

    code, lines = _migrate(pg_url, redis_url, dave, "-", stdin=f"{erin}\n")
    assert code == 0
    assert lines == [
        f"{json.dumps(n)} {where}: carried over from {legacy_role_name(n)} to {role_name(n)}"
        + (" (1 keys moved)" if where == "redis" else "")
        for where in ("database", "redis")
        for n in (dave, erin)
    ]
    for name in (dave, erin):
        assert await _threads(await provision_user(pg_url, name), "kept") == [name]
        with redis.Redis.from_url(await provision_redis_user(redis_url, name)) as own:
            assert own.exists(f"{journal_prefix(name)}run:r1:live") == 1
    # Running it again changes nothing.
    code, lines = _migrate(pg_url, redis_url, dave)
    assert (code, lines) == (
        0,
        [
            f"{json.dumps(dave)} database: already {role_name(dave)}",
            f"{json.dumps(dave)} redis: already {role_name(dave)}",
        ],
    )


async def test_migrate_roles_leaves_an_old_role_two_users_shared_alone(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    victim = f"Bob-Jones-{tag}"
    twin = legacy_role_name(victim).removeprefix("gth_")
    made.add(victim, twin)
    await _write_thread(old_provision(pg_url, victim), victim)
    code, lines = _migrate(pg_url, redis_url, victim, twin)
    assert code == 1 and len(lines) == 4
    assert all(": left alone: " in line for line in lines)
    assert _role(pg_url, legacy_role_name(victim)) == (None, [legacy_role_name(victim)])

    # The admin, knowing whose it is, names that user alone.
    code, lines = _migrate(pg_url, redis_url, victim)
    assert code == 0 and "database: carried over from" in lines[0]
    assert await _threads(await provision_user(pg_url, victim), "kept") == [victim]
    assert await _threads(await provision_user(pg_url, twin), "kept") == [None]


async def test_migrate_roles_moves_an_old_role_out_of_another_names_way_first(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    """``u_z…``'s new role is ``u_5fz…``'s old one: ``u_5fz…``'s moves first, whatever the
    order the names come in."""
    first, second = f"u_z{tag}", f"u_5fz{tag}"
    assert role_name(first) == legacy_role_name(second)
    made.add(first, second)
    for name in (first, second):
        await _write_thread(old_provision(pg_url, name), name, thread=name)
        with redis.Redis.from_url(old_redis_user(redis_url, name)) as old:
            old.set(f"gth:{{{legacy_role_name(name)}}}:run:{name}", name)
    report = await carry_over_roles(pg_url, [first, second])
    redis_report = await carry_over_redis_users(redis_url, [first, second])
    for name in (first, second):
        assert report[name].startswith("carried over") and redis_report[name].startswith(
            "carried over"
        )
        assert await _threads(await provision_user(pg_url, name), first, second) == [
            name if thread == name else None for thread in (first, second)
        ]
        with redis.Redis.from_url(await provision_redis_user(redis_url, name)) as own:
            assert own.exists(f"{journal_prefix(name)}run:{name}") == 1
