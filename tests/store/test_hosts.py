"""How the hosts choose the postgres store: URLs from the environment only, taken out of it;
a clear refusal when the store cannot work; ``runLeaseSeconds`` from the configuration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from tornado.httpclient import HTTPClientError

from gth_jupyter.config import ConfigError, GthConfigWarning, load_config
from gth_jupyter.store.postgres_env import DATABASE_URL_VAR, REDIS_URL_VAR
from tests.conftest import body
from tests.helpers import free_port, run_input, user_message
from tests.sse import sse_events


@pytest.fixture
def dumped(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Calls of make_non_dumpable by the extension (recorded, not made: this is pytest)."""
    calls: list[bool] = []
    monkeypatch.setattr("gth_jupyter.server.app.make_non_dumpable", lambda: calls.append(True))
    return calls


@pytest.fixture
def gth_env() -> dict[str, str]:
    """The server's URLs in the environment (none unless a test says)."""
    return {}


@pytest.fixture
def gth_config() -> dict[str, Any]:
    return {"llm": {"type": "fake", "responses": ["Stored in PostgreSQL."]}}


@pytest.fixture
def gth_app(gth_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    # In the environment before the server (made from this config) starts.
    for name in (DATABASE_URL_VAR, REDIS_URL_VAR):
        monkeypatch.delenv(name, raising=False)
    for name, value in gth_env.items():
        monkeypatch.setenv(name, value)
    return {"checkpointer": "postgres"}


@pytest.fixture
def with_urls(pg_url: str, gth_env: dict[str, str]) -> str:
    gth_env.update({DATABASE_URL_VAR: pg_url, REDIS_URL_VAR: "redis://127.0.0.1:1/0"})
    return pg_url


async def test_the_extension_takes_the_urls_out_of_the_environment(
    dumped: list[bool], with_urls: str, jp_fetch: Any
) -> None:
    answer = await jp_fetch(
        "gth", "agents", "default", "run", method="POST", body=body("e", "r", [user_message("hi")])
    )
    text = "".join(e.get("delta", "") for e in sse_events(answer.body))
    assert text == "Stored in PostgreSQL."
    assert DATABASE_URL_VAR not in os.environ and REDIS_URL_VAR not in os.environ
    assert dumped == [True]
    with psycopg.connect(with_urls) as conn:
        row = conn.execute("SELECT owner FROM gth_threads WHERE thread_id = 'e'").fetchone()
    assert row is not None


async def test_postgres_without_a_url_is_a_clear_refusal_not_a_crash(
    dumped: list[bool], jp_fetch: Any
) -> None:
    info = json.loads((await jp_fetch("gth", "info")).body)
    assert info["status"] == "error" and DATABASE_URL_VAR in info["error"]["message"]
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch(
            "gth",
            "agents",
            "default",
            "run",
            method="POST",
            body=body("x", "r", [user_message("hi")]),
        )
    assert json.loads(refused.value.response.body)["code"] == info["error"]["code"]
    assert dumped == []  # nothing secret to protect


@pytest.fixture
def no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "gth_jupyter.server.app.postgres_missing",
        lambda: "The postgres checkpointer needs the 'psycopg' module: install the extra.",
    )


async def test_the_postgres_extra_missing_is_named(
    dumped: list[bool], with_urls: str, no_extra: None, jp_fetch: Any
) -> None:
    info = json.loads((await jp_fetch("gth", "info")).body)
    assert info["status"] == "error" and "psycopg" in info["error"]["message"]


def test_run_lease_seconds_comes_from_the_config_and_a_database_url_there_is_ignored(
    tmp_path: Path,
) -> None:
    config = tmp_path / ".gsloth.config.json"
    assert load_config(cwd=tmp_path, home=tmp_path).run_lease_seconds == 30
    config.write_text(json.dumps({"runLeaseSeconds": 5}))
    assert load_config(cwd=tmp_path, home=tmp_path).run_lease_seconds == 5
    config.write_text(json.dumps({"runLeaseSeconds": 0.5}))
    with pytest.raises(ConfigError):
        load_config(cwd=tmp_path, home=tmp_path)
    secret = {"databaseUrl": "postgresql://u:p@h/db", "redis_url": "redis://:p@h"}
    config.write_text(json.dumps(secret))
    with pytest.warns(GthConfigWarning) as record:
        loaded = load_config(cwd=tmp_path, home=tmp_path)
    messages = [str(w.message) for w in record]
    assert len(messages) == 2 and all("environment" in m for m in messages)
    assert "postgresql://u:p@h/db" not in " ".join(messages)
    assert "databaseUrl" not in type(loaded).model_fields


def serve(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    config = {"llm": {"type": "fake", "responses": ["Stored by the standalone server."]}}
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(config))
    command = [sys.executable, "-m", "gth_jupyter.server.cli", "serve", *args]
    full = {**os.environ, "HOME": str(tmp_path), **env}
    full.pop(DATABASE_URL_VAR, None) if DATABASE_URL_VAR not in env else None
    return subprocess.Popen(
        command, cwd=tmp_path, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--checkpointer", "postgres"], DATABASE_URL_VAR),
        (["--memory", "--checkpointer", "postgres"], "--memory"),
        (["--checkpointer", "sqlite", "--run-lease-seconds", "0"], "--run-lease-seconds"),
    ],
)
def test_the_standalone_server_refuses_a_store_that_cannot_work(
    tmp_path: Path, args: list[str], error: str
) -> None:
    server = serve(tmp_path, *args, env={})
    out, err = server.communicate(timeout=120)
    assert server.returncode == 2 and error in err, (out, err)


def test_the_standalone_server_keeps_threads_in_postgres(pg_url: str, tmp_path: Path) -> None:
    token, port = "t0ken-t0ken-t0ken-t0ken", free_port()
    env = {DATABASE_URL_VAR: pg_url, "GTH_JUPYTER_TOKEN": token}
    args = ["--checkpointer", "postgres", "--run-lease-seconds", "5", "--port", str(port)]
    server = serve(tmp_path, *args, env=env)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "AG-UI server on" in line, (line, server.stderr.read() if server.stderr else "")
        headers = {"Authorization": f"token {token}"}
        body = run_input("standalone", "r", [user_message("hi")])
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.post(
                    f"http://127.0.0.1:{port}/agents/default/run",
                    json=body,
                    headers=headers,
                    timeout=60,
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert answer.status_code == 200, answer.text
        text = "".join(e.get("delta", "") for e in sse_events(answer.text))
        assert text == "Stored by the standalone server."
    finally:
        server.terminate()
        server.communicate(timeout=60)
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = 'standalone'"
        ).fetchone()
    assert row is not None and row[0] > 0
