"""Helpers test modules share: a free loopback port, and an AG-UI run request as the clients send
it. (An SSE body's events: ``tests/sse.py``; a run through the AG-UI layer and the fixtures:
``tests/conftest.py``.)"""

from __future__ import annotations

import socket
from typing import Any


def free_port() -> int:
    """A loopback port nothing listens on (the OS's pick, released for the caller to bind)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def user_message(text: str, message_id: str = "u1") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def run_input(
    thread_id: str, run_id: str, messages: str | list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    """A ``RunAgentInput`` as ``@ag-ui/client`` 1.0 sends it (``protocolVersion`` "1.0", so the
    run answers in AG-UI 1.0, not the 0.x dialect). ``messages`` as a string: one user message,
    ``u-<run_id>``. A ``None`` is left out: ``protocolVersion=None`` is a pre-1.0 client, which
    sends none. (As JSON bytes: ``tests.conftest.body``.)"""
    if isinstance(messages, str):
        messages = [user_message(messages, f"u-{run_id}")]
    payload = {"threadId": thread_id, "runId": run_id, "protocolVersion": "1.0"}
    payload = {**payload, "messages": messages, **extra}
    return {k: v for k, v in payload.items() if v is not None}


def browser_lanes(workers: int) -> int:
    """How many pytest-xdist workers take the browser and Hub units: half of them, rounded up
    (one of two, two of three). Those units mostly wait on pages, kernels and streams: with a
    worker more than there are cores (scripts/test.sh's GTH_TEST_WORKERS), the waits of the
    browser workers overlap the CPU work of the others."""
    return max(1, (workers + 1) // 2)
