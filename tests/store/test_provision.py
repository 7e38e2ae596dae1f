"""Per-user roles and schemas: each user's server sees its own threads and nobody else's."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from psycopg import errors, sql

from gth_jupyter.store.postgres import open_postgres
from gth_jupyter.store.provision import pre_spawn_hook, provision_user, role_name


def test_role_names_are_safe_and_distinct() -> None:
    assert role_name("alice") == "gth_alice"
    odd = [role_name(n) for n in ("Alice", "alice.smith", "alice_smith", "a" * 80, 'x"; DROP')]
    assert len(set(odd)) == len(odd) and "gth_alice" not in odd
    assert all(len(n) <= 63 and n.replace("_", "").isalnum() for n in odd)


async def test_each_user_gets_a_schema_no_other_user_can_read(
    pg_url: str, users: tuple[str, str]
) -> None:
    alice, bob = users
    url_a = await provision_user(pg_url, alice)
    url_b = await provision_user(pg_url, bob)
    assert role_name(alice) in url_a and "postgres@" not in url_a
    stores = [await open_postgres(url, lease_seconds=5) for url in (url_a, url_b)]
    try:
        await stores[0].threads.claim("secret-thread", alice)
        config = {"configurable": {"thread_id": "secret-thread", "checkpoint_ns": ""}}
        await stores[0].saver.aput(config, empty_checkpoint(), {}, {})
        assert await stores[1].threads.owner("secret-thread") is None  # bob's own table
        assert await stores[1].saver.aget_tuple(config) is None
    finally:
        for store in stores:
            await store.close()
    with psycopg.connect(pg_url) as admin:
        where = admin.execute(
            "SELECT tablename, schemaname FROM pg_tables WHERE tablename IN "
            "('gth_threads', 'gth_run_leases', 'checkpoints') ORDER BY 1, 2"
        ).fetchall()
    a_schema, b_schema = role_name(alice), role_name(bob)
    assert sorted(where) == sorted(
        (t, s)
        for t in ("checkpoints", "gth_run_leases", "gth_threads")
        for s in (a_schema, b_schema)
    )
    with psycopg.connect(url_b, autocommit=True) as conn:
        for table in ("gth_threads", "checkpoints", "checkpoint_blobs", "gth_run_leases"):
            with pytest.raises(errors.InsufficientPrivilege):
                conn.execute(
                    sql.SQL("SELECT * FROM {}.{}").format(
                        sql.Identifier(a_schema), sql.Identifier(table)
                    )
                )
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE public.shared_by_accident (x int)")
        with pytest.raises(errors.InsufficientPrivilege):
            conn.execute(
                sql.SQL("ALTER ROLE {} SET search_path = {}").format(
                    sql.Identifier(a_schema), sql.Identifier(a_schema)
                )
            )


async def test_provisioning_again_rotates_the_password_and_keeps_the_data(
    pg_url: str, users: tuple[str, str]
) -> None:
    alice, _ = users
    first = await provision_user(pg_url, alice)
    store = await open_postgres(first, lease_seconds=5)
    await store.threads.claim("kept", alice)
    await store.close()

    def verifier() -> str:
        with psycopg.connect(pg_url) as conn:
            row = conn.execute(
                "SELECT rolpassword FROM pg_authid WHERE rolname = %s", (role_name(alice),)
            ).fetchone()
        assert row is not None
        return str(row[0])

    before = verifier()
    second = await provision_user(pg_url, alice)
    assert second != first and verifier() != before
    assert verifier().startswith("SCRAM-SHA-256$")  # never stored (or sent) in plain text
    store = await open_postgres(second, lease_seconds=5)
    try:
        assert await store.threads.owner("kept") == alice
    finally:
        await store.close()


def test_the_cli_prints_the_users_url(pg_url: str, users: tuple[str, str]) -> None:
    alice, _ = users
    env = {"GTH_JUPYTER_ADMIN_DATABASE_URL": pg_url, "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-m", "gth_jupyter.server.cli", "db", "provision", alice],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    url = out.stdout.strip()
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT current_user, current_schema()").fetchone() == (
            role_name(alice),
            role_name(alice),
        )
    missing = subprocess.run(
        [sys.executable, "-m", "gth_jupyter.server.cli", "db", "provision", alice],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert missing.returncode == 2 and "GTH_JUPYTER_ADMIN_DATABASE_URL" in missing.stderr


async def test_the_hub_hook_gives_the_spawner_the_users_url(
    pg_url: str, users: tuple[str, str]
) -> None:
    alice, _ = users

    class Spawner:  # the part of a JupyterHub spawner the hook uses
        user = type("User", (), {"name": alice})()
        environment: dict[str, str] = {"KEPT": "1"}

    spawner = Spawner()
    await pre_spawn_hook(pg_url)(spawner)
    url = spawner.environment["GTH_JUPYTER_DATABASE_URL"]
    assert spawner.environment["KEPT"] == "1"
    store = await open_postgres(url, lease_seconds=5)
    try:
        assert await store.threads.claim("t", alice) == alice
    finally:
        await store.close()
