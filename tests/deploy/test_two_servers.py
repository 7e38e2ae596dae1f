"""Two ``gth-jupyter serve`` processes, one PostgreSQL and one Redis: one deployment.

A thread started on one server continues on the other; a client that loses its stream from one
re-attaches through the other and gets every event exactly once; ``kill -9`` of the server
holding a run frees the thread within the lease time, and a client-tool call pending at that
moment is still answered through the other server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import free_port, run_input
from tests.sse import frames_of, sse_events

TOKEN = "two-servers-token-0123456789"
LEASE_SECONDS = 3
LONG = "chunk " * 200
FROM_TWO = "Two's first answer."
CAMERA = {
    "name": "capture_image",
    "description": "Capture a frame from the webcam.",
    "parameters": {"type": "object", "properties": {}},
}


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    url: str
    log: Path

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=f"{self.url}/gth/",
            headers={"Authorization": f"token {TOKEN}"},
            timeout=httpx.Timeout(30, connect=5),
        )

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)


def start(name: str, root: Path, script: list[Any], env: dict[str, str]) -> Server:
    """A server whose scripted model answers ``script`` (each process has its own script)."""
    folder = root / name
    folder.mkdir()
    config = folder / ".gsloth.config.json"
    config.write_text(json.dumps({"llm": {"type": "fake", "responses": script}}))
    port = free_port()
    log = folder / "server.log"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gth_jupyter.server.cli",
            "serve",
            "--port",
            str(port),
            "-c",
            str(config),
            "--checkpointer",
            "postgres",
            "--run-lease-seconds",
            str(LEASE_SECONDS),
        ],
        cwd=folder,
        env={**os.environ, **env, "GTH_JUPYTER_TOKEN": TOKEN},
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server {name} exited:\n{log.read_text()}")
        try:
            if httpx.get(
                f"{url}/gth/health", headers={"Authorization": f"token {TOKEN}"}
            ).is_success:
                return Server(name, process, url, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    pytest.fail(f"server {name} did not start:\n{log.read_text()}")


@pytest.fixture
def deployment(pg_url: str, redis_url: str, tmp_path: Path) -> Iterator[dict[str, Server]]:
    env = {"GTH_JUPYTER_DATABASE_URL": pg_url, "GTH_JUPYTER_REDIS_URL": redis_url}
    one = start(
        "one",
        tmp_path,
        [
            "Hello from one.",  # thread t1, first turn
            {"content": LONG, "delayMs": 5},  # thread t2: a long run, detached
            {"content": LONG, "delayMs": 10},  # thread t3: killed mid-run
            {"content": "Say cheese.", "toolCalls": [{"name": "capture_image", "id": "cam-1"}]},
        ],
        env,
    )
    two = start(
        "two",
        tmp_path,
        [FROM_TWO, "Two's second answer."],
        env,
    )
    servers = {"one": one, "two": two}
    try:
        yield servers
    finally:
        for server in servers.values():
            server.kill()


@pytest.fixture
async def clients(deployment: dict[str, Server]) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
    one, two = deployment["one"].client(), deployment["two"].client()
    try:
        yield {"one": one, "two": two}
    finally:
        await one.aclose()
        await two.aclose()


async def first_frames(http: httpx.AsyncClient, payload: dict[str, Any], count: int) -> str:
    """Posts a run and drops the connection after ``count`` frames."""
    got, block = [], ""
    async with http.stream("POST", "agents/default/run", json=payload) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line:
                block += line + "\n"
            elif block:
                got.append(block)
                block = ""
                if len(got) >= count:
                    break
    return "\n".join(got) + "\n\n"


async def test_a_thread_started_on_one_server_continues_on_the_other(clients) -> None:
    one, two = clients["one"], clients["two"]
    first = await one.post("agents/default/run", json=run_input("t1", "r1", "hi"))
    assert sse_events(first.text)[-1]["type"] == "RUN_FINISHED"
    second = await two.post("agents/default/run", json=run_input("t1", "r2", "and you?"))
    events = sse_events(second.text)
    assert "".join(e.get("delta", "") for e in events) == FROM_TWO
    view = (await one.get("threads/t1")).json()
    assert [(m["role"], m["content"]) for m in view["messages"]] == [
        ("user", "hi"),
        ("assistant", "Hello from one."),
        ("user", "and you?"),
        ("assistant", FROM_TWO),
    ]
    listed = (await two.get("threads")).json()["threads"]
    assert [t["threadId"] for t in listed] == ["t1"]


async def test_a_client_reattaches_through_the_other_server_and_misses_nothing(
    clients,
) -> None:
    one, two = clients["one"], clients["two"]
    await one.post("agents/default/run", json=run_input("t1", "r1", "hi"))  # script position
    seen = frames_of(
        await first_frames(one, run_input("t2", "r2", "long", forwardedProps={"detach": True}), 5)
    )
    last = int(seen[-1]["id"])
    busy = (await two.get("threads/t2")).json()
    assert busy["busy"] and busy["run"] == {"runId": "r2"}  # the other server knows it runs
    rest_response = await two.get("runs/r2/events", headers={"Last-Event-ID": str(last)})
    assert rest_response.status_code == 200
    rest = frames_of(rest_response.text)
    ids = [int(f["id"]) for f in seen + rest]
    assert ids == list(range(1, len(ids) + 1))  # every event exactly once, in order
    events = [json.loads(f["data"]) for f in seen + rest]
    assert events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e.get("delta", "") for e in events) == LONG
    # The same run id posted to the other server re-attaches; it does not start a second run.
    again = await two.post("agents/default/run", json=run_input("t2", "r2", "long"))
    assert [e["type"] for e in sse_events(again.text)] == [e["type"] for e in events]


async def post_when_free(
    http: httpx.AsyncClient, payload: dict[str, Any], bound: float
) -> tuple[httpx.Response, float]:
    """Posts ``payload`` until the thread is no longer busy, as a client does on ``run_busy``;
    returns the answer and how long that took."""
    start = time.monotonic()
    while True:
        response = await http.post("agents/default/run", json=payload)
        if response.status_code != 409:
            assert response.status_code == 200, response.text
            return response, time.monotonic() - start
        assert response.json()["code"] == "run_busy" and response.headers["Retry-After"]
        if time.monotonic() - start > bound:
            pytest.fail("the thread stayed busy after its holder was killed")
        await asyncio.sleep(0.25)


async def wait_free(http: httpx.AsyncClient, payload: dict[str, Any], bound: float) -> float:
    """Posts ``payload`` until the thread is no longer busy; returns how long that took."""
    return (await post_when_free(http, payload, bound))[1]


async def test_kill_9_of_the_holder_frees_the_thread_within_the_lease(clients, deployment) -> None:
    one, two = clients["one"], clients["two"]
    await one.post("agents/default/run", json=run_input("t1", "r1", "hi"))
    await one.post("agents/default/run", json=run_input("t2", "r2", "long"))
    await first_frames(one, run_input("t3", "r3", "long", forwardedProps={"detach": True}), 4)
    assert (await two.get("threads/t3")).json()["busy"]
    deployment["one"].kill()
    waited = await wait_free(two, run_input("t3", "r4", "still there?"), LEASE_SECONDS + 10)
    assert waited <= LEASE_SECONDS + 3
    view = (await two.get("threads/t3")).json()
    assert view["messages"][-1] == {
        "id": view["messages"][-1]["id"],
        "role": "assistant",
        "content": FROM_TWO,
    }


async def test_a_pending_client_tool_is_answered_through_the_other_server(
    clients, deployment
) -> None:
    one, two = clients["one"], clients["two"]
    for thread, run, text in (("t1", "r1", "hi"), ("t2", "r2", "long"), ("t3", "r3", "long")):
        await one.post("agents/default/run", json=run_input(thread, run, text))
    asked = await one.post(
        "agents/default/run", json=run_input("cam", "r4", "take a photo", tools=[CAMERA])
    )
    events = sse_events(asked.text)
    # A client tool suspends the run: its call is left open for the client to answer.
    assert events[-1]["type"] == "RUN_FINISHED"
    assert [e["toolCallName"] for e in events if e["type"] == "TOOL_CALL_START"] == [
        "capture_image"
    ]
    assert not [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    deployment["one"].kill()
    history = (await two.get("threads/cam")).json()
    assert history["pendingToolCallIds"] == ["cam-1"]
    answer = {
        "id": "tool-answer",
        "role": "tool",
        "toolCallId": "cam-1",
        "content": json.dumps({"mimeType": "image/jpeg", "data": "aGVsbG8="}),
    }
    # The first server was killed right after the run ended: it may not have let go of the
    # thread yet, which the other server sees as busy until the lease runs out.
    resumed, _ = await post_when_free(
        two,
        {
            "threadId": "cam",
            "runId": "r6",
            "protocolVersion": "1.0",
            "messages": [*history["messages"], answer],
            "tools": [CAMERA],
        },
        LEASE_SECONDS + 10,
    )
    events = sse_events(resumed.text)
    assert events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e.get("delta", "") for e in events) == FROM_TWO
    view = (await two.get("threads/cam")).json()
    assert [m["role"] for m in view["messages"]][-3:] == ["assistant", "tool", "assistant"]
    assert view["pendingToolCallIds"] == [] and not view["busy"]


async def test_a_branch_made_on_one_server_is_the_current_branch_on_the_other(clients) -> None:
    """``parentRunId`` on one server: the other shows the new branch, lists the old one, and
    continues the new one."""
    one, two = clients["one"], clients["two"]
    await one.post("agents/default/run", json=run_input("b1", "r1", "first?"))
    await two.post("agents/default/run", json=run_input("b1", "r2", "second?"))
    branched = await one.post(
        "agents/default/run", json=run_input("b1", "r3", "instead?", parentRunId="r1")
    )
    assert sse_events(branched.text)[0]["parentRunId"] == "r1"
    view = (await two.get("threads/b1")).json()
    assert [m["content"] for m in view["messages"] if m["role"] == "user"] == [
        "first?",
        "instead?",
    ]
    assert {b["runId"]: b["current"] for b in view["branches"]} == {"r2": False, "r3": True}
    old = (await two.get("threads/b1", params={"run": "r2"})).json()
    assert [m["content"] for m in old["messages"] if m["role"] == "user"] == ["first?", "second?"]
    # Two goes on from the current branch's end.
    await two.post("agents/default/run", json=run_input("b1", "r4", "and then?"))
    now = (await one.get("threads/b1")).json()
    assert [m["content"] for m in now["messages"] if m["role"] == "user"] == [
        "first?",
        "instead?",
        "and then?",
    ]
    assert now["messages"][-1]["content"] == "Two's second answer."
