"""AG-UI over the widget's comm: the same SSE bytes as the HTTP endpoint, in comm messages.

The widget sends ``{type: "run", requestId, body}``; the kernel answers with ``chunk`` messages
carrying SSE text (coalesced like the HTTP stream), then ``end``, or one ``error`` carrying the
same JSON refusal the endpoint would send. ``abort`` cancels a run; ``history`` returns a
thread's AG-UI messages; ``esm`` returns the widget bundle for hosts that cannot load it from
the server.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import Future
from importlib import resources
from typing import Any

from ..agui.errors import ProtocolError
from ..agui.history import to_agui_messages
from ..agui.mapping import to_interrupt
from ..agui.run import prepare_run, stream_events
from ..agui.sse import SSEWriter
from ..server.agents import DEFAULT_AGENT, AgentRegistry
from .kernel_agent import LoopThread, kernel_loop, kernel_registry

log = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], None]


def bundle_code() -> str:
    """The built widget bundle shipped in the package."""
    return (resources.files("gth_jupyter") / "static" / "widget.js").read_text(encoding="utf-8")


class CommTransport:
    """Serves one widget's comm requests with the kernel's agent."""

    def __init__(
        self,
        send: Send,
        *,
        registry: Callable[[], AgentRegistry] = kernel_registry,
        loop: Callable[[], LoopThread] = kernel_loop,
    ) -> None:
        self._send = send
        self._registry = registry
        self._loop = loop
        self._runs: dict[str, Future[None]] = {}

    def handle(self, content: dict[str, Any]) -> Future[None] | None:
        """Dispatches one message from the widget; returns the work it started, if any."""
        kind = content.get("type")
        request_id = str(content.get("requestId", ""))
        if kind == "run":
            body = content.get("body")
            raw = body.encode() if isinstance(body, str) else _dumps(body)
            future = self._loop().submit(
                self._run(request_id, str(content.get("agent") or DEFAULT_AGENT), raw)
            )
            self._runs[request_id] = future
            future.add_done_callback(lambda _: self._runs.pop(request_id, None))
            return future
        if kind == "abort":
            running = self._runs.get(request_id)
            if running is not None:
                running.cancel()
            return None
        if kind == "history":
            thread = str(content.get("threadId", ""))
            return self._loop().submit(self._history(request_id, thread))
        if kind == "esm":
            self._send({"type": "esm", "requestId": request_id, "code": bundle_code()})
        return None

    async def _run(self, request_id: str, agent: str, body: bytes) -> None:
        try:
            registry = self._registry()
            runtime = await registry.runtime(agent)
            prepared = await prepare_run(runtime, body)
        except ProtocolError as error:
            self._refuse(request_id, error)
            return
        buffer: list[bytes] = []

        def write(data: bytes) -> None:
            buffer.append(data)

        async def flush() -> None:
            if buffer:
                data = b"".join(buffer).decode("utf-8")
                buffer.clear()
                self._send({"type": "chunk", "requestId": request_id, "data": data})

        events = stream_events(prepared)
        try:
            async with SSEWriter(write, flush, window=0.016) as writer:
                async for event in events:
                    await writer.send(event)
                await writer.flush()
        except asyncio.CancelledError:
            await flush()
            raise
        finally:
            await events.aclose()
            prepared.claim.release()
            self._send({"type": "end", "requestId": request_id})

    async def _history(self, request_id: str, thread_id: str) -> None:
        try:
            runtime = await self._registry().runtime(DEFAULT_AGENT)
        except ProtocolError as error:
            self._refuse(request_id, error)
            return
        state = await runtime.thread_state(thread_id)
        self._send(
            {
                "type": "history",
                "requestId": request_id,
                "threadId": thread_id,
                "messages": to_agui_messages(state.messages),
                "pendingToolCallIds": [p.tool_call_id for p in state.pending if p.client_tool],
                "interrupts": [
                    to_interrupt(p).model_dump(mode="json", by_alias=True, exclude_none=True)
                    for p in state.pending
                ],
            }
        )

    def _refuse(self, request_id: str, error: ProtocolError) -> None:
        body = error.to_json()
        self._send({"type": "error", "requestId": request_id, "status": error.status, "body": body})


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()
