"""One run per thread across processes: the SQLite store's run leases.

The server extension, the kernel's own agent and a notebook's ``Session`` keep threads in one
SQLite file. These tests race real processes on one thread (a ``Session``, and the runtime the
way the server's handler drives it) and kill a holder with ``SIGKILL``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import load_config
from gth_jupyter.contract.errors import RunBusyError
from gth_jupyter.store import CheckpointStore, FileLeases, LocalLeases

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock leases are POSIX")

#: A peer process: ``session`` asks through ``Session``; ``server`` starts and streams the run
#: as the server's handler does. It prints READY once built, starts when the ``go`` file
#: appears, prints the answer's text to stdout, and ends with one JSON line: what happened.
PEER = r"""
import asyncio, json, sys, time
from pathlib import Path

role, config, db, thread, go = sys.argv[1:6]
from gth_jupyter.agui import ProtocolError


def outcome(text=None, error=None):
    if error is None:
        return {"outcome": "answered", "text": text}
    return {"outcome": "refused", "status": error.status, "code": error.code}


if role == "session":
    from gth_jupyter import Session

    session = Session(config, thread=thread, checkpointer="sqlite", checkpoint_path=db)

    def run():
        try:
            return outcome(session.ask("hello", stream=True))
        except ProtocolError as error:
            return outcome(error=error)
else:
    from gth_jupyter.agent import AgentRegistry
    from gth_jupyter.store import CheckpointStore
    from gth_jupyter.agui import parse_request, runtime_of
    from gth_jupyter.config import load_config
    from gth_jupyter.runs import RunService, Transport

    def store_of(db):  # a path, or a PostgreSQL URL
        if db.startswith("postgresql://"):
            return CheckpointStore("postgres", url=db, lease_seconds=2)
        return CheckpointStore("sqlite", db)

    registry = AgentRegistry(
        load_config(config), command="notebook", store=store_of(db)
    )
    body = json.dumps({
        "threadId": thread, "runId": "server-run",
        "messages": [{"id": "server-msg", "role": "user", "content": "hello"}],
    }).encode()

    async def serve():
        runtime = await runtime_of(registry, "default")
        sent = []

        async def flush():
            pass

        try:
            await RunService().start(runtime, parse_request(body), Transport(sent.append, flush))
        except ProtocolError as error:
            return outcome(error=error)
        frames = b"".join(sent).decode().split("\n\n")
        events = [json.loads(f[6:]) for f in frames if f.startswith("data: ")]
        text = "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
        print(text, end="", flush=True)
        return outcome(text)

    def run():
        return asyncio.run(serve())

print("READY", flush=True)
while not Path(go).exists():
    time.sleep(0.005)
result = run()
print("\n" + json.dumps(result), flush=True)
"""

ANSWER = " ".join(f"word{i}" for i in range(30))


def write_config(folder: Path, token_delay_ms: int) -> Path:
    path = folder / ".gsloth.config.json"
    llm = {"type": "fake", "tokenDelayMs": token_delay_ms, "responses": [ANSWER, ANSWER]}
    path.write_text(json.dumps({"llm": llm}))
    return path


def start_peer(
    role: str, config: Path, db: Path | str, thread: str, go: Path
) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", PEER, role, str(config), str(db), thread, str(go)]
    env = {**os.environ, "HOME": str(config.parent)}
    return subprocess.Popen(
        command,
        cwd=config.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_ready(peer: subprocess.Popen[str]) -> None:
    assert peer.stdout is not None
    line = peer.stdout.readline()
    assert line.strip() == "READY", (line, peer.stderr.read() if peer.stderr else "")


def result_of(peer: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = peer.communicate(timeout=90)
    assert peer.returncode == 0, err
    outcome: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return outcome


def thread_messages(config: Path, db: Path | str, thread: str) -> list[str]:
    """The thread as stored, read by a third party through a fresh store."""
    import asyncio

    async def read() -> list[str]:
        store = (
            CheckpointStore("postgres", url=db)
            if isinstance(db, str)
            else CheckpointStore("sqlite", db)
        )
        registry = AgentRegistry(load_config(config), command="notebook", store=store)
        try:
            state = await (await registry.runtime()).thread_state(thread)
        finally:
            await registry.close()
        return [f"{m.type}:{m.content}" for m in state.messages]

    return asyncio.run(read())


async def test_a_lease_excludes_a_second_holder_until_released(tmp_path: Path) -> None:
    leases = FileLeases(tmp_path / "locks")
    first = await leases.acquire("nb-1", "run-1")
    assert first is not None
    assert await leases.acquire("nb-1", "run-2") is None  # another open file, even here
    assert await leases.holder("nb-1") == "run-1"  # any process can ask who holds it
    other = await leases.acquire("nb-2")
    assert other is not None
    first.release()
    first.release()  # idempotent
    assert await leases.holder("nb-1") is None
    again = await leases.acquire("nb-1", "run-3")
    assert again is not None
    again.release()
    other.release()
    assert await leases.holder("never-leased") is None


async def test_a_memory_store_leases_nothing_beyond_its_process() -> None:
    store = CheckpointStore("memory")
    assert isinstance(store.leases, LocalLeases)
    lease = await store.leases.acquire("t", "r")
    assert lease is not None and await store.leases.acquire("t", "r2") is not None


def test_thread_ids_become_safe_lock_file_names(tmp_path: Path) -> None:
    leases = FileLeases(tmp_path / "locks")
    path = leases.path_for("../../etc/passwd\x00 or a very long id " * 20)
    assert path.parent == tmp_path / "locks" and len(path.name) < 64


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_the_runtime_refuses_a_thread_another_store_holds(
    tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    config = write_config(tmp_path, 0)
    db = tmp_path / "threads.sqlite"
    url = request.getfixturevalue("pg_url") if kind == "postgres" else None

    async def another() -> CheckpointStore:
        """The same threads, opened by another process (another store object here)."""
        store = CheckpointStore(kind, db, url=url, lease_seconds=2)
        await store.get()  # the postgres leases live in the opened database
        return store

    registry = AgentRegistry(
        load_config(config), command="notebook", store=await another(), cwd=tmp_path
    )
    runtime = await registry.runtime()
    elsewhere = await another()
    held = await elsewhere.leases.acquire("shared", "elsewhere")
    assert held is not None
    with pytest.raises(RunBusyError):
        await runtime.claim("shared")
    assert not runtime.is_busy("shared")  # a refused claim leaves nothing behind
    assert await runtime.running("shared") == "elsewhere"
    held.release()
    assert await elsewhere.leases.holder("shared") is None  # the release has landed
    claim = await runtime.claim("shared", "mine")
    assert await elsewhere.leases.acquire("shared") is None
    assert await elsewhere.leases.holder("shared") == "mine"
    claim.release()
    await registry.close()
    await elsewhere.close()


@pytest.mark.parametrize(
    ("roles", "kind"),
    [
        (("session", "server"), "sqlite"),
        (("session", "session"), "sqlite"),
        (("server", "server"), "postgres"),  # two servers sharing one database
    ],
)
def test_two_processes_racing_on_one_thread_give_one_run_and_one_run_busy(
    tmp_path: Path, roles: tuple[str, str], kind: str, request: pytest.FixtureRequest
) -> None:
    config = write_config(tmp_path, 100)  # ~3 s of answer: the loser arrives while it streams
    go = tmp_path / "go"
    db: Path | str = tmp_path / "threads.sqlite"
    if kind == "postgres":
        db = request.getfixturevalue("pg_url")
    peers = [start_peer(role, config, db, "nb-race", go) for role in roles]
    try:
        for peer in peers:
            wait_ready(peer)
        go.touch()
        results = [result_of(peer) for peer in peers]
    finally:
        for peer in peers:
            peer.kill()
    answered = [r for r in results if r["outcome"] == "answered"]
    refused = [r for r in results if r["outcome"] == "refused"]
    assert len(answered) == 1 and answered[0]["text"] == ANSWER, results
    assert refused == [{"outcome": "refused", "status": 409, "code": "run_busy"}]
    # Nothing corrupted: the thread holds the winner's turn, and only it.
    assert thread_messages(config, db, "nb-race") == ["human:hello", f"ai:{ANSWER}"]


def test_a_holder_killed_with_sigkill_releases_the_thread(tmp_path: Path) -> None:
    config = write_config(tmp_path, 500)  # ~15 s of answer, cut short
    db, go = tmp_path / "threads.sqlite", tmp_path / "go"
    go.touch()
    holder = start_peer("session", config, db, "nb-killed", go)
    try:
        wait_ready(holder)
        assert holder.stdout is not None
        assert holder.stdout.read(5) == "word0"  # streaming: the run holds the thread
        leases = CheckpointStore("sqlite", db).leases
        assert leases.acquire_now("nb-killed") is None
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    finally:
        holder.kill()
        holder.communicate()
    deadline = time.monotonic() + 10
    lease = leases.acquire_now("nb-killed")
    while lease is None and time.monotonic() < deadline:
        time.sleep(0.05)
        lease = leases.acquire_now("nb-killed")
    assert lease is not None
    lease.release()
    # The thread is usable again, from another process.
    peer = start_peer("session", write_config(tmp_path, 0), db, "nb-killed", go)
    wait_ready(peer)
    assert result_of(peer)["outcome"] == "answered"
