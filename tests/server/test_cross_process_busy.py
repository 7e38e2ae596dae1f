"""One run per thread across processes: the server refuses a thread a kernel's Session holds.

The server extension and a notebook's ``Session`` keep threads in one SQLite file. While the
``Session`` (a real process of its own) streams on a thread, the endpoint answers ``409 run_busy``
with ``Retry-After``, as it does for a run of its own; once the Session is done the server runs on
the thread and sees what the Session said.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from tests.conftest import body
from tests.helpers import user_message
from tests.sse import sse_events as parse_sse

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock leases are POSIX")

SLOW = " ".join(f"kernel{i}" for i in range(20))

#: The kernel side: a Session on the shared file, streaming a slow answer to stdout.
HOLDER = """
import sys
from gth_jupyter import Session

config, db = sys.argv[1:3]
session = Session(config, thread="nb-shared", checkpointer="sqlite", checkpoint_path=db)
session.ask("from the kernel", stream=True)
session.close()
"""


@pytest.fixture
def shared_db(tmp_path: Path) -> Path:
    return tmp_path / "threads.sqlite"


@pytest.fixture
def gth_script() -> list[Any]:
    return ["From the server."]


@pytest.fixture
def gth_config(gth_script: list[Any]) -> dict[str, Any]:
    return {"llm": {"type": "fake", "responses": gth_script}}


@pytest.fixture
def gth_app(shared_db: Path) -> dict[str, Any]:
    return {"checkpointer": "sqlite", "checkpoint_path": str(shared_db)}


def ask(run_id: str) -> bytes:
    """The server's turn on the Session's thread (from a client that names no protocol)."""
    message = user_message("from the server", f"{run_id}-msg")
    return body("nb-shared", run_id, [message], protocolVersion=None)


def text_of(body: bytes) -> str:
    frames = parse_sse(body)
    return "".join(f.get("delta", "") for f in frames if f["type"] == "TEXT_MESSAGE_CONTENT")


async def test_the_endpoint_answers_409_while_a_kernel_session_holds_the_thread(
    jp_fetch: Any, tmp_path: Path, shared_db: Path
) -> None:
    kernel_dir = tmp_path / "kernel"
    kernel_dir.mkdir()
    config = kernel_dir / ".gsloth.config.json"
    llm = {"type": "fake", "tokenDelayMs": 75, "responses": [SLOW]}
    config.write_text(json.dumps({"llm": llm}))
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER,
        str(config),
        str(shared_db),
        cwd=kernel_dir,
        env={**os.environ, "HOME": str(kernel_dir)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        first = await asyncio.wait_for(holder.stdout.readexactly(7), timeout=60)
        assert first == b"kernel0"  # the Session's run is streaming
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch("gth", "agents", "default", "run", method="POST", body=ask("r1"))
        assert info.value.code == 409
        assert info.value.response.headers["Retry-After"]
        assert json.loads(info.value.response.body)["code"] == "run_busy"
        _, err = await asyncio.wait_for(holder.communicate(), timeout=60)
        assert holder.returncode == 0, err.decode()
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()
    response = await jp_fetch("gth", "agents", "default", "run", method="POST", body=ask("r2"))
    assert text_of(response.body) == "From the server."
    # The server sees the Session's turn: one thread, one history, nothing lost or mixed.
    history = json.loads((await jp_fetch("gth", "threads", "nb-shared")).body)
    assert [(m["role"], m["content"]) for m in history["messages"]] == [
        ("user", "from the kernel"),
        ("assistant", SLOW),
        ("user", "from the server"),
        ("assistant", "From the server."),
    ]
