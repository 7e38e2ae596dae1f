"""Fixtures for the hub suite: one real JupyterHub per session with users ``a`` and ``b``, each
with a running single-user server (see ``hub_harness``).

The Hub starts when the first test needs it and stops (with everything it started) when the
session ends; its log is kept as ``test-artifacts/hub/jupyterhub.log``. Where the test
PostgreSQL and Redis run (``tests/services.py`` starts them when the test command did not), the
Hub runs as docs/deployment.md says, on a database of its own (dropped afterwards, with the
users' roles); elsewhere the servers keep threads in SQLite. Without ``tests/hub/node_modules``
(``npm ci`` here) the suite is skipped, not failed.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The browser suite's harness (free ports, process trees, notebook pages) is shared.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from hub_harness import ADMIN, PROXY, Hub, Services

USERS = ("a", "b")


# pytest-jupyter's autouse fixtures (loaded for tests/server) would close the event loop that
# Playwright's sync API runs on; these tests start no in-process ServerApp.
@pytest.fixture
def jp_asyncio_loop() -> None:
    return None


@pytest.fixture
def jp_server_cleanup() -> None:
    return None


def _drop_roles(admin_url: str) -> None:
    import psycopg

    from gth_jupyter.store.provision import role_name

    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name in USERS:
            with contextlib.suppress(psycopg.Error):  # still owns something elsewhere
                conn.execute(f'DROP ROLE IF EXISTS "{role_name(name)}"')


def _drop_redis_users(admin_url: str) -> None:
    import redis

    from gth_jupyter.store.provision import role_name

    with redis.Redis.from_url(admin_url) as client:
        client.execute_command("ACL", "DELUSER", *(role_name(name) for name in USERS))


@contextlib.contextmanager
def _services() -> Iterator[Services | None]:
    """A fresh database on the test PostgreSQL and the test Redis, or ``None`` where there is
    no PostgreSQL."""
    from tests.services import admin_url, fresh_database, redis_url

    try:
        admin = admin_url()
    except pytest.skip.Exception as e:
        print(f"hub tests: no PostgreSQL ({e}); the servers keep threads in SQLite")
        yield None
        return
    try:
        redis: str | None = redis_url()
    except pytest.skip.Exception:
        redis = None
    databases = contextlib.contextmanager(fresh_database)
    try:
        with databases(admin) as database:
            yield Services(database, redis)
    finally:
        _drop_roles(admin)
        if redis is not None:
            _drop_redis_users(redis)


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """JupyterHub with users ``a`` and ``b``, both servers running and answering
    ``gth/health`` through the proxy."""
    if not PROXY.exists():
        pytest.skip(f"{PROXY} is missing: run `npm ci` in tests/hub (scripts/setup.sh --test)")
    with _services() as services:
        yield from _running_hub(tmp_path_factory.mktemp("jupyterhub"), services)


def _running_hub(root: Path, services: Services | None) -> Iterator[Hub]:
    hub = Hub(root, services)
    try:
        hub.start()
        for name in USERS:
            hub.add_user(name)
        hub.add_user(ADMIN)  # a Hub admin, without a server of their own
        hub.spawn(USERS)
        yield hub
    except Exception:
        print(hub.log_tail())
        raise
    finally:
        hub.stop()
        hub.save_log("jupyterhub.log")
