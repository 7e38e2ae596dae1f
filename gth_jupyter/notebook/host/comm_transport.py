"""AG-UI over the widget's comm: the same SSE bytes as the HTTP endpoint, in comm messages.

The widget sends ``{type: "run", requestId, body}``; the kernel answers with ``chunk`` messages
carrying SSE text (coalesced like the HTTP stream, by the same pump), then ``end``, or one
``error`` carrying the same JSON refusal the endpoint would send. ``abort`` cancels a run;
``history`` returns the thread view ``GET gth/threads/{id}`` gives; ``info`` what ``GET gth/info``
gives; ``esm`` the widget bundle, for hosts that cannot load it from the server. Messages come
from the page, so every field is checked before use and a malformed one gets an ``error`` reply.

The protocol layer and the agent (LangChain, LangGraph: seconds to import) load with the first
request that needs them, so a widget served over HTTP never makes the kernel import them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from concurrent.futures import Future
from importlib import resources
from typing import TYPE_CHECKING, Any

from ._host import kernel_host
from .kernel_access import in_kernel_access

if TYPE_CHECKING:
    from ...agent.registry import AgentRegistry
    from ...agui.errors import ProtocolError
    from .loop import LoopThread

__all__ = ["CommTransport", "bundle_code"]

log = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], None]
#: Request ids are echoed back; a page cannot make the kernel echo megabytes.
MAX_ID = 200


def bundle_code() -> str:
    """The built widget bundle shipped in the package."""
    return (resources.files("gth_jupyter") / "static" / "widget.js").read_text(encoding="utf-8")


class CommTransport:
    """Serves one widget's comm requests with the kernel's agent (``registry`` and ``loop``:
    another agent and loop thread, for tests; default: the kernel host's)."""

    def __init__(
        self,
        send: Send,
        *,
        registry: Callable[[], AgentRegistry] | None = None,
        loop: Callable[[], LoopThread] | None = None,
    ) -> None:
        self._send = send
        self._registry = registry or (lambda: kernel_host().registry())
        self._loop = loop or (lambda: kernel_host().loop())
        self._runs: dict[str, Future[None]] = {}

    def handle(self, content: dict[str, Any]) -> Future[None] | None:
        """Dispatches one message from the widget; returns the work it started, if any."""
        kind = content.get("type")
        request_id = str(content.get("requestId", ""))[:MAX_ID]
        if kind == "run":
            agent = content.get("agent") or _default_agent()
            body = content.get("body")
            if not isinstance(agent, str) or not isinstance(body, (str, dict)):
                self._refuse(request_id, _bad_message("run needs a string agent and a body"))
                return None
            raw = body.encode() if isinstance(body, str) else _dumps(body)
            future = self._loop().submit(self._run(request_id, agent, raw))
            self._runs[request_id] = future
            future.add_done_callback(lambda _: self._runs.pop(request_id, None))
            return future
        if kind == "abort":
            running = self._runs.get(request_id)
            if running is not None:
                running.cancel()
            return None
        if kind == "history":
            thread = content.get("threadId")
            if not isinstance(thread, str) or not thread:
                self._refuse(request_id, _bad_message("history needs a threadId string"))
                return None
            turn = content.get("turnId") or None
            if turn is not None and not isinstance(turn, str):
                self._refuse(request_id, _bad_message("turnId must be a string"))
                return None
            return self._loop().submit(self._history(request_id, thread, turn))
        if kind == "info":
            self._send({"type": "info", "requestId": request_id, "info": self._registry().info()})
        elif kind == "esm":
            self._send({"type": "esm", "requestId": request_id, "code": bundle_code()})
        return None

    async def _run(self, request_id: str, agent: str, body: bytes) -> None:
        from ...agui.errors import ProtocolError
        from ...agui.request import parse_request
        from ...agui.run import runtime_of
        from ...runs.service import Transport

        buffer: list[bytes] = []
        opened = False

        def write(data: bytes) -> None:
            buffer.append(data)

        async def flush() -> None:
            if buffer:
                data = b"".join(buffer).decode("utf-8")
                buffer.clear()
                self._send({"type": "chunk", "requestId": request_id, "data": data})

        def open_stream() -> None:
            nonlocal opened
            opened = True

        # A comm message costs more than an HTTP write: coalesce over a frame (16 ms).
        transport = Transport(write, flush, open_stream, window=0.016)
        try:
            runtime = await runtime_of(self._registry(), agent)
            request = parse_request(body)
            # The run's kernel tools work in this kernel, whatever kernel id the page sent.
            await kernel_host().runs().start(runtime, request, transport, kernel=in_kernel_access())
        except ProtocolError as error:  # refused before the stream opened
            self._refuse(request_id, error)
        finally:
            if opened:
                self._send({"type": "end", "requestId": request_id})

    async def _history(self, request_id: str, thread_id: str, turn: str | None = None) -> None:
        from ...agui.errors import ProtocolError
        from ...agui.history import thread_view
        from ...agui.run import runtime_of

        try:
            runtime = await runtime_of(self._registry(), _default_agent())
        except ProtocolError as error:
            self._refuse(request_id, error)
            return
        view = await thread_view(runtime, thread_id, turn)
        self._send({"type": "history", "requestId": request_id, **view})

    def _refuse(self, request_id: str, error: ProtocolError) -> None:
        self._send(refusal_message(request_id, error))


def refusal_message(request_id: str, error: ProtocolError) -> dict[str, Any]:
    """A refusal as the comm sends it: the HTTP refusal's status and body, so the widget reads
    it as it reads an HTTP one (``js/src/transport.js``)."""
    return {
        "type": "error",
        "requestId": request_id,
        "status": error.status,
        "body": error.to_json(),
    }


def _default_agent() -> str:
    from ...contract.names import DEFAULT_AGENT

    return DEFAULT_AGENT


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def _bad_message(why: str) -> ProtocolError:
    from ...agui.errors import invalid_message

    return invalid_message(why)
