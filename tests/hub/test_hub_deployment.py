"""The JupyterHub deployment of docs/deployment.md, for real: the Hub's ``pre_spawn_hook`` gave
each user a database role and schema of their own, and each user's server keeps its threads
there (with the requester as owner), through ``--GthJupyterApp.checkpointer=postgres``. Skipped
where there is no test PostgreSQL (the Hub then runs on SQLite). That the URL does not reach the
kernels is checked by the browser test, from a notebook cell."""

from __future__ import annotations

import uuid

import pytest
from hub_harness import Hub, reply_of

from tests.sse import sse_events

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def database(hub: Hub) -> str:
    """The superuser URL of the Hub's database."""
    if hub.services is None:
        pytest.skip("no test PostgreSQL: the Hub's servers keep threads in SQLite")
    return hub.services.database_admin_url


def started(hub: Hub, owner: str, visitor: str) -> str:
    thread_id = f"{visitor}-on-{owner}-{uuid.uuid4().hex[:8]}"
    response = hub.run(owner, hub.users[visitor].token, thread_id, f"{visitor} asks")
    assert response.status_code == 200, response.text
    events = sse_events(response.text)
    assert events[-1]["type"] == "RUN_FINISHED", events[-3:]
    text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == reply_of(owner)
    return thread_id


def test_each_users_server_keeps_threads_in_that_users_own_schema(hub: Hub, database: str) -> None:
    import psycopg

    on_a, on_b = started(hub, "a", "a"), started(hub, "b", "b")
    with psycopg.connect(database) as conn:
        roles = conn.execute(
            "SELECT rolname, rolsuper, rolcreaterole, rolcreatedb FROM pg_roles "
            "WHERE rolname IN ('gth_a', 'gth_b') ORDER BY rolname"
        ).fetchall()
        assert roles == [("gth_a", False, False, False), ("gth_b", False, False, False)]
        schemas = conn.execute(
            "SELECT nspname, pg_get_userbyid(nspowner) FROM pg_namespace "
            "WHERE nspname LIKE 'gth\\_%' ORDER BY nspname"
        ).fetchall()
        assert schemas == [("gth_a", "gth_a"), ("gth_b", "gth_b")]
        # Nothing landed in public: every table is in its user's schema.
        public = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        assert public == []

        a_rows = conn.execute("SELECT thread_id, owner FROM gth_a.gth_threads").fetchall()
        b_rows = conn.execute("SELECT thread_id, owner FROM gth_b.gth_threads").fetchall()
        assert (on_a, "a") in a_rows and on_b not in [t for t, _ in a_rows]
        assert (on_b, "b") in b_rows and on_a not in [t for t, _ in b_rows]
        assert {owner for _, owner in b_rows} == {"b"}  # nobody else used b's server
        checkpointed = conn.execute("SELECT DISTINCT thread_id FROM gth_a.checkpoints").fetchall()
        assert (on_a,) in checkpointed


def test_each_users_server_journals_its_runs_as_that_users_own_redis_user(hub: Hub) -> None:
    """The hook gave each server a Redis user of its own: its runs' keys carry its user
    (``gth:{gth_a}:run:…``), and that Redis user may touch nothing else."""
    import time

    import redis

    if hub.services is None or not hub.services.redis_url:
        pytest.skip("no test Redis: the Hub's servers keep run journals in process")
    started(hub, "a", "a")
    started(hub, "b", "b")
    with redis.Redis.from_url(hub.services.redis_url) as admin:
        deadline = time.monotonic() + 30
        while True:  # the journal ships a run's frames in the background
            keys = {k.decode() for k in admin.keys("gth:*")}
            users = {k.split("}")[0] for k in keys}
            if {"gth:{gth_a", "gth:{gth_b"} <= users or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert {"gth:{gth_a", "gth:{gth_b"} <= users, keys
        for role in ("gth_a", "gth_b"):
            assert admin.acl_getuser(role)["keys"] == [f"~gth:{{{role}}}:*"]
