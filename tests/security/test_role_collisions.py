"""Two Hub users never share a database role or a Redis user, and provisioning never hands one
user's to another.

The old naming kept a name of ``[a-z0-9_]`` as it was and gave any other ``gth_<cleaned>_<eight
hex digits>``, so the user literally named ``bob_jones_bc2fc3bc`` got ``bob-jones``'s role: their
provisioning reset ``bob-jones``'s password and read ``bob-jones``'s schema and Redis keys. Each
pair below is computed with that old function (the twin is the old role's own name), and shown
to have collided under it. Against the real test PostgreSQL and Redis.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
import redis
from psycopg import errors, sql
from redis.exceptions import NoPermissionError

from gth_jupyter.store.provision import owner_comment, provision_user
from gth_jupyter.store.redis_users import journal_prefix, owner_rule, provision_redis_user
from gth_jupyter.store.roles import RoleTakenError, legacy_role_name, role_name
from tests.legacy_roles import Made, old_provision, old_redis_user

pytestmark = pytest.mark.timeout(90)

#: The reviewer's victims; each one's twin is the name its old role was spelt as.
VICTIMS = ("bob-jones", "Alice", "carol@example.com", "a*")


def twin(victim: str) -> str:
    """The name whose old role was ``victim``'s: the old role without ``gth_``."""
    name = legacy_role_name(victim).removeprefix("gth_")
    assert name != victim and legacy_role_name(name) == legacy_role_name(victim)
    return name


@pytest.fixture
def tag() -> str:
    return uuid.uuid4().hex[:6]


@pytest.fixture
def made(pg_url: str, redis_url: str) -> Iterator[Made]:
    found = Made(pg_url, redis_url, ())
    yield found
    found.drop()


def test_the_old_twins_are_what_the_reviewer_measured() -> None:
    assert twin("bob-jones") == "bob_jones_bc2fc3bc"
    assert twin("Alice") == "alice_3bc51062"
    assert [role_name(twin(v)) != role_name(v) for v in VICTIMS] == [True] * len(VICTIMS)


def _secret(url: str, text: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE secret (x text)")
        conn.execute("INSERT INTO secret VALUES (%s)", (text,))


def _whoami(url: str) -> tuple[str, str]:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT current_user, current_schema()").fetchone()
    assert row is not None
    return str(row[0]), str(row[1])


def _read_secret(url: str, schema: str) -> str:
    with psycopg.connect(url) as conn:
        query = sql.SQL("SELECT x FROM {}.secret").format(sql.Identifier(schema))
        row = conn.execute(query).fetchone()
    assert row is not None
    return str(row[0])


async def test_each_of_two_old_twins_gets_a_role_of_its_own(pg_url: str, made: Made) -> None:
    for victim in VICTIMS:
        attacker = twin(victim)
        made.add(victim, attacker)
        made.drop()
        victim_url = await provision_user(pg_url, victim)
        _secret(victim_url, f"{victim}'s secret")
        attacker_url = await provision_user(pg_url, attacker)
        # The victim's credentials still open the victim's own schema: nothing was reset.
        assert _whoami(victim_url) == (role_name(victim), role_name(victim))
        assert _read_secret(victim_url, role_name(victim)) == f"{victim}'s secret"
        assert _whoami(attacker_url) == (role_name(attacker), role_name(attacker))
        with pytest.raises(errors.InsufficientPrivilege):
            _read_secret(attacker_url, role_name(victim))
        with pytest.raises(errors.UndefinedTable):  # the attacker's own schema is empty
            _read_secret(attacker_url, role_name(attacker))
        # Provisioning the victim again is no takeover of the attacker's either.
        victim_url = await provision_user(pg_url, victim)
        assert _whoami(attacker_url)[0] == role_name(attacker)


async def test_each_of_two_old_twins_gets_a_redis_user_of_its_own(
    redis_url: str, made: Made
) -> None:
    admin = redis.Redis.from_url(redis_url)
    for victim in VICTIMS[:3]:  # "a*" and its twin: test_redis_acl's glob test
        attacker = twin(victim)
        made.add(victim, attacker)
        made.drop()
        victim_client = redis.Redis.from_url(await provision_redis_user(redis_url, victim))
        key = f"{journal_prefix(victim)}run:r1"
        victim_client.set(key, "secret")
        attacker_client = redis.Redis.from_url(await provision_redis_user(redis_url, attacker))
        assert victim_client.exists(key) == 1  # the victim's password still works
        for command in (("GET", key), ("SET", key, "forged"), ("DEL", key)):
            with pytest.raises(NoPermissionError):
                attacker_client.execute_command(*command)
        assert admin.get(key) == b"secret"
        users = (admin.acl_getuser(role_name(victim)), admin.acl_getuser(role_name(attacker)))
        assert [u["keys"] for u in users] == [
            [f"~{journal_prefix(victim)}*"],
            [f"~{journal_prefix(attacker)}*"],
        ]
        victim_client.close()
        attacker_client.close()
    admin.close()


async def test_an_old_role_a_twin_may_share_is_handed_to_neither_by_itself(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    """The old deployment's ``Bob-Jones…`` has a role; the name spelt as that role is refused
    it, and so is the victim until an admin says whose it is (``db migrate-roles``)."""
    victim = f"Bob-Jones-{tag}"
    attacker = twin(victim)
    made.add(victim, attacker)
    made.drop()
    victim_url = old_provision(pg_url, victim)
    _secret(victim_url, "old secret")
    victim_redis = redis.Redis.from_url(old_redis_user(redis_url, victim))
    old_key = f"gth:{{{legacy_role_name(victim)}}}:run:r1"
    victim_redis.set(old_key, "old secret")

    for name in (attacker, victim):
        with pytest.raises(RoleTakenError) as refused:
            await provision_user(pg_url, name)
        assert refused.value.code == "role_migration_needed"
        with pytest.raises(RoleTakenError) as refused:
            await provision_redis_user(redis_url, name)
        assert refused.value.code == "role_migration_needed"
    # The old role and ACL user are as they were: the victim's old URLs still open them.
    assert _read_secret(victim_url, legacy_role_name(victim)) == "old secret"
    assert victim_redis.exists(old_key) == 1
    with redis.Redis.from_url(redis_url) as admin:
        assert admin.get(old_key) == b"old secret"
    victim_redis.close()


async def test_an_unrecorded_old_role_at_a_new_name_is_not_taken_over(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    """``u_5fz…``'s old role is spelt as ``u_z…``'s new one: ``u_z…`` is refused until
    ``u_5fz…``'s next provisioning carries it to its new name."""
    owner, attacker = f"u_5fz{tag}", f"u_z{tag}"
    assert role_name(attacker) == legacy_role_name(owner)
    made.add(owner, attacker)
    made.drop()
    owner_url = old_provision(pg_url, owner)
    _secret(owner_url, "owner's")
    owner_redis = redis.Redis.from_url(old_redis_user(redis_url, owner))
    owner_redis.set(f"{journal_prefix(attacker)}run:r1", "owner's")  # the same hash tag

    with pytest.raises(RoleTakenError) as refused:
        await provision_user(pg_url, attacker)
    assert refused.value.code == "role_owner_unknown"
    with pytest.raises(RoleTakenError) as refused:
        await provision_redis_user(redis_url, attacker)
    assert refused.value.code == "role_owner_unknown"
    assert _read_secret(owner_url, legacy_role_name(owner)) == "owner's"
    assert owner_redis.exists(f"{journal_prefix(attacker)}run:r1") == 1

    # The owner's next spawn moves their role and keys out of the way; then the name is free.
    owner_url = await provision_user(pg_url, owner)
    owner_client = redis.Redis.from_url(await provision_redis_user(redis_url, owner))
    attacker_url = await provision_user(pg_url, attacker)
    attacker_client = redis.Redis.from_url(await provision_redis_user(redis_url, attacker))
    assert _read_secret(owner_url, role_name(owner)) == "owner's"
    assert owner_client.exists(f"{journal_prefix(owner)}run:r1") == 1
    with redis.Redis.from_url(redis_url) as admin:
        assert admin.get(f"{journal_prefix(owner)}run:r1") == b"owner's"
    with pytest.raises(errors.UndefinedTable):
        _read_secret(attacker_url, role_name(attacker))
    assert attacker_client.exists(f"{journal_prefix(attacker)}run:r1") == 0
    with pytest.raises(NoPermissionError):
        attacker_client.exists(f"{journal_prefix(owner)}run:r1")
    for client in (owner_redis, owner_client, attacker_client):
        client.close()


async def test_a_role_recorded_for_another_name_is_refused_untouched(
    pg_url: str, redis_url: str, made: Made, tag: str
) -> None:
    """Whatever put it there (an admin's hand, a future naming), a role recorded for ``alice``
    under ``mallory``'s name stays ``alice``'s: no new password, no new record."""
    alice, mallory = f"alice{tag}", f"mallory{tag}"
    made.add(alice, mallory)
    await provision_user(pg_url, alice)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} RENAME TO {}").format(
                sql.Identifier(role_name(alice)), sql.Identifier(role_name(mallory))
            )
        )

    def state() -> tuple[object, ...] | None:
        with psycopg.connect(pg_url) as conn:
            return conn.execute(
                "SELECT rolpassword, shobj_description(oid, 'pg_authid') FROM pg_authid "
                "WHERE rolname = %s",
                (role_name(mallory),),
            ).fetchone()

    before = state()
    assert before is not None and before[1] == owner_comment(alice)
    with pytest.raises(RoleTakenError) as refused:
        await provision_user(pg_url, mallory)
    assert refused.value.code == "role_taken" and alice not in refused.value.message
    assert state() == before

    admin = redis.Redis.from_url(redis_url)
    admin.execute_command(
        "ACL", "SETUSER", role_name(mallory), "reset", "on", "nopass", owner_rule(alice)
    )
    acl_before = admin.acl_getuser(role_name(mallory))
    with pytest.raises(RoleTakenError) as refused:
        await provision_redis_user(redis_url, mallory)
    assert refused.value.code == "role_taken"
    assert admin.acl_getuser(role_name(mallory)) == acl_before
    admin.close()


async def test_a_user_cannot_forge_the_owner_record_of_a_role(
    pg_url: str, made: Made, tag: str
) -> None:
    """The record the refusals above rest on is the admin's alone: a user's credentials may
    neither rewrite it (``COMMENT ON ROLE`` needs ``CREATEROLE``) nor move a role aside."""
    alice, mallory = f"alice{tag}", f"mallory{tag}"
    made.add(alice, mallory)
    await provision_user(pg_url, alice)
    url = await provision_user(pg_url, mallory)
    with psycopg.connect(url, autocommit=True) as conn:
        for role in (role_name(mallory), role_name(alice)):
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(
                    sql.SQL("COMMENT ON ROLE {} IS {}").format(
                        sql.Identifier(role), sql.Literal(owner_comment(f"someone{tag}"))
                    )
                )
        with pytest.raises(errors.InsufficientPrivilege):  # nor move alice's role aside
            conn.execute(
                sql.SQL("ALTER ROLE {} RENAME TO {}").format(
                    sql.Identifier(role_name(alice)), sql.Identifier(f"gth_x{tag}")
                )
            )
    # Provisioning goes on telling them apart.
    await provision_user(pg_url, alice)
    await provision_user(pg_url, mallory)
