"""The real PostgreSQL and Redis the tests use: the test command starts them
(``scripts/services.sh``) and exports their URLs; a test run started otherwise starts them here,
once per session. A test that needs one is skipped, saying why, only when the server cannot be
installed or started."""

from __future__ import annotations

import atexit
import os
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "services.sh"
DB_VAR = "GTH_TEST_DATABASE_URL"
REDIS_VAR = "GTH_TEST_REDIS_URL"

_started: dict[str, str] | None = None


def _start() -> dict[str, str]:
    """Starts both servers once for this test process (when the test command did not)."""
    global _started
    if _started is None:
        folder = tempfile.mkdtemp(prefix="gth-services-")
        out = subprocess.run(
            ["bash", str(SCRIPT), "start", folder], capture_output=True, text=True, timeout=600
        )
        found: dict[str, str] = {}
        for line in out.stdout.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            if value:
                found[name] = value
        found["_errors"] = out.stderr.strip()
        atexit.register(subprocess.run, ["bash", str(SCRIPT), "stop", folder], check=False)
        _started = found
    return _started


def service_url(var: str, what: str) -> str:
    """The URL of a running server, from the test command or started now; skips otherwise."""
    url = os.environ.get(var)
    if url:
        return url
    started = _start()
    if var not in started:
        pytest.skip(f"{what} is not available here: {started['_errors'] or 'not installed'}")
    return started[var]


def admin_url() -> str:
    return service_url(DB_VAR, "PostgreSQL")


def fresh_database(admin: str, prefix: str = "gth_test_") -> Iterator[str]:
    """A new, empty database on the test server; dropped afterwards (also by bench/load.py)."""
    import psycopg

    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = admin.rpartition("/")
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def worker_index() -> int:
    """This pytest-xdist worker's number (``gw3`` is 3); 0 without xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker.removeprefix("gw") or 0)


def redis_url() -> str:
    """The test Redis, on a database of this worker's own: parallel workers share the server,
    and each test empties its worker's database (``FLUSHDB``), never another's."""
    url = service_url(REDIS_VAR, "Redis")
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    # Redis has 16 databases by default: scripts/test.sh runs at most 8 workers.
    index = (base + worker_index()) % 16
    return urlunsplit(parts._replace(path=f"/{index}"))
