"""A real kernel for the notebook tests, running this venv's Python in an empty folder."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import KernelManager


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Any]:
    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable  # this venv's Python, with gth_jupyter
    # These tests look at what a live front end gets (the widget); a bare client sends no
    # cellId, which a %gth cell would otherwise take for a headless run (test_headless.py).
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "GTH_JUPYTER_HEADLESS": "0"}
    manager.start_kernel(cwd=str(tmp_path), env=env)
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run_in_kernel(client: Any, code: str) -> tuple[dict[str, Any], str]:
    """Runs ``code``; returns the execute reply's content and what the cell printed."""
    msg_id = client.execute(code)
    messages = iopub_of(client, msg_id, timeout=60)
    printed = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    # This request's reply, not one left on the channel by an earlier request.
    while (reply := client.get_shell_msg(timeout=60))["parent_header"].get("msg_id") != msg_id:
        pass
    return reply["content"], printed


def iopub_of(client: Any, msg_id: str, timeout: float = 120) -> list[dict[str, Any]]:
    """The iopub messages of the request ``msg_id``, up to the kernel's idle status for it
    (``timeout``: at most this long between two messages)."""
    seen: list[dict[str, Any]] = []
    while True:
        message = client.get_iopub_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(message)
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            return seen


def kept_copy(outputs: list[Any]) -> dict[str, str]:
    """The one output a headless ``%gth`` cell keeps, its static copy: each mimetype's text
    (nbformat may save it as a list of lines)."""
    assert len(outputs) == 1, outputs
    assert outputs[0]["output_type"] == "display_data", outputs
    data = outputs[0]["data"]
    return {mime: "".join(text) if isinstance(text, list) else text for mime, text in data.items()}
