"""Routing a kernel's messages to the request that caused them, by ``msg_id``.

A ``jupyter_client`` channel is a shared socket: two coroutines reading it steal each other's
replies. The :class:`Router` is the only reader: one task per channel (IOPub, shell, control)
puts each message into the queue of the request named by its ``parent_header.msg_id``, and
drops the rest (IOPub is broadcast, so other clients' traffic arrives too). Several requests can
then be in flight on one client at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from jupyter_client.asynchronous.client import AsyncKernelClient

from gth_jupyter.contract.errors import CodedError

Routed = tuple[str, dict[str, Any]]
"""A message and the name of the channel it came on (``iopub``, ``shell`` or ``control``)."""
CHANNELS = ("iopub", "shell", "control")


class KernelClientError(CodedError, RuntimeError):
    """A kernel failure a caller can act on; each raise names its ``code`` (``kernel_timeout``,
    ``kernel_not_found``...)."""

    code = "kernel_error"


class Router:
    """Reads a client's channels and hands each message to the request it answers."""

    def __init__(self, client: AsyncKernelClient) -> None:
        self._client = client
        self._queues: dict[str, asyncio.Queue[Routed]] = {}
        self._readers: list[asyncio.Task[None]] = []

    def start(self) -> None:
        """Starts one reader task per channel (the channels must be open)."""
        for name in CHANNELS:
            channel = getattr(self._client, f"{name}_channel")
            self._readers.append(asyncio.create_task(self._read(name, channel)))

    async def stop(self) -> None:
        """Stops the readers."""
        for task in self._readers:
            task.cancel()
        for task in self._readers:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._readers.clear()

    @contextlib.contextmanager
    def route(self, msg: dict[str, Any]) -> Iterator[asyncio.Queue[Routed]]:
        """The queue of ``msg``'s replies, registered before it is sent and dropped after."""
        msg_id = str(msg["header"]["msg_id"])
        queue: asyncio.Queue[Routed] = asyncio.Queue()
        self._queues[msg_id] = queue
        try:
            yield queue
        finally:
            self._queues.pop(msg_id, None)

    def send(self, channel: str, msg: dict[str, Any]) -> None:
        """Sends ``msg`` on ``shell`` or ``control``."""
        getattr(self._client, f"{channel}_channel").send(msg)

    async def request(self, channel: str, msg: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Sends one request on ``shell`` or ``control`` and returns its reply message."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        with self.route(msg) as queue:
            self.send(channel, msg)
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    kind = msg["header"]["msg_type"]
                    raise KernelClientError(
                        f"no {kind} reply in {timeout:g} s", code="kernel_timeout"
                    )
                try:
                    source, message = await asyncio.wait_for(queue.get(), remaining)
                except asyncio.TimeoutError:
                    continue
                if source == channel:
                    return message

    async def _read(self, name: str, channel: Any) -> None:
        while True:
            message: dict[str, Any] = await channel.get_msg()
            parent = message.get("parent_header") or {}
            queue = self._queues.get(str(parent.get("msg_id", "")))
            if queue is not None:
                queue.put_nowait((name, message))
