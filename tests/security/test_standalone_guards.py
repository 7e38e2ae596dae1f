"""Item 9: the standalone server's guards: token length, ``--allow-remote``, the ``Host`` check
(Jupyter's DNS-rebinding guard) and preflight only on real routes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.server.standalone import make_app
from gth_jupyter.store import CheckpointStore
from tests.helpers import free_port

TOKEN = "guards-token-0123456789"
AUTH = {"Authorization": f"token {TOKEN}"}


def serve(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``gth-jupyter serve`` that is expected to refuse to start."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"llm": {"type": "fake", "responses": ["x"]}}))
    base = {k: v for k, v in os.environ.items() if k != "GTH_JUPYTER_TOKEN"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "gth_jupyter.server.cli",
            "serve",
            "--memory",
            "-c",
            str(config),
            *args,
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**base, **(env or {})},
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "source"),
    [
        (["--token", "short"], {}, "--token"),
        (["--token=fifteen-chars-x"], {}, "--token"),
        ([], {"GTH_JUPYTER_TOKEN": "s3cret"}, "$GTH_JUPYTER_TOKEN"),
    ],
)
def test_short_tokens_are_refused(
    tmp_path: Path, args: list[str], env: dict[str, str], source: str
) -> None:
    result = serve(tmp_path, "--port", str(free_port()), *args, env=env)
    assert result.returncode == 2
    assert f"The token from {source} has" in result.stderr and "at least 16" in result.stderr
    assert "AG-UI server on" not in result.stdout


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.org"])
def test_a_host_beyond_loopback_needs_allow_remote(tmp_path: Path, host: str) -> None:
    result = serve(tmp_path, "--host", host, "--token", TOKEN)
    assert result.returncode == 2
    assert "--allow-remote" in result.stderr and "beyond loopback" in result.stderr
    assert "runs the agent's tools" in result.stderr


@pytest_asyncio.fixture
async def base_url() -> AsyncIterator[str]:
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": ["ok"]}})
    registry = AgentRegistry(config, command="api", store=CheckpointStore("memory"))
    port = free_port()
    server = make_app(registry, token=TOKEN, max_body_bytes=10_000).listen(
        port, address="127.0.0.1"
    )
    yield f"http://127.0.0.1:{port}"
    server.stop()
    await registry.close()


async def test_a_foreign_host_header_is_refused_on_loopback(base_url: str) -> None:
    """A rebound name (attacker.example -> 127.0.0.1) still sends its own Host."""
    async with httpx.AsyncClient(base_url=base_url) as client:
        for host in [
            "attacker.example",
            "attacker.example:8080",
            "127.0.0.1.attacker.example",
            "localhost.attacker.example",
            "[::1",
            "10.0.0.1",
            "[fe80::1]:80",
            "",
        ]:
            for method, path in [
                ("GET", "/health"),
                ("POST", "/agents/default/run"),
                ("OPTIONS", "/info"),
            ]:
                response = await client.request(method, path, headers={**AUTH, "Host": host})
                assert response.status_code == 403, (host, method, response.text)
                body = response.json()
                assert body["code"] == "host_not_allowed" and "loopback" in body["message"]
        for host in [
            "localhost",
            "LOCALHOST:3000",
            "127.0.0.1",
            "127.3.2.1:9",
            "[::1]",
            "[::1]:8888",
        ]:
            response = await client.get("/health", headers={**AUTH, "Host": host})
            assert response.status_code == 200, host


async def test_allow_remote_turns_the_host_check_off() -> None:
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": ["ok"]}})
    registry = AgentRegistry(config, command="api", store=CheckpointStore("memory"))
    port = free_port()
    app = make_app(registry, token=TOKEN, max_body_bytes=10_000, check_host=False)
    server = app.listen(port, address="127.0.0.1")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            ok = await client.get("/health", headers={**AUTH, "Host": "agents.example.org"})
            assert ok.status_code == 200
    finally:
        server.stop()
        await registry.close()


async def test_preflight_answers_only_on_real_routes(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as client:
        for path in ["/nope", "/gth/nope", "/agents/default/run/x", "/"]:
            for method in ["OPTIONS", "PUT", "DELETE", "PATCH"]:
                response = await client.request(method, path, headers=AUTH)
                assert response.status_code == 404, (method, path)
                assert response.json()["code"] == "not_found"
        for path in ["/agents/default/run", "/gth/agents/default/run", "/health", "/gth/info"]:
            response = await client.options(path)
            assert response.status_code == 204, path
            assert "Access-Control-Allow-Origin" in response.headers


async def test_make_app_refuses_a_short_token() -> None:
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": ["ok"]}})
    registry = AgentRegistry(config, command="api", store=CheckpointStore("memory"))
    with pytest.raises(ValueError, match="at least 16"):
        make_app(registry, token="s3cret", max_body_bytes=10_000)
    await registry.close()
