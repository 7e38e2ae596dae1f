"""Local stand-ins for the OpenAI and Anthropic HTTP APIs, for the real provider packages to call.

:class:`StubServer` listens on 127.0.0.1 in a thread and speaks two wire formats:

- ``POST /v1/chat/completions`` (OpenAI chat completions): a JSON reply, or with ``"stream": true``
  server-sent ``data: {chunk}`` lines with ``choices[0].delta`` (text, then ``tool_calls`` deltas
  whose ``arguments`` arrive in pieces), a usage chunk when asked for, and ``data: [DONE]``.
- ``POST /v1/messages`` (Anthropic messages): a JSON reply, or with ``"stream": true`` the events
  ``message_start``, ``content_block_start`` / ``_delta`` / ``_stop`` (``text_delta``, and
  ``input_json_delta`` for ``tool_use``), ``message_delta`` and ``message_stop``.

Replies are scripted (:meth:`StubServer.script`) and served in order, whichever format is asked
for; every request is recorded with its headers and JSON body. With nothing scripted the stub
answers 500, so an unexpected model call fails the test that made it.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted model turn: some text, then tool calls ``(name, args)``."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class Request:
    """What a provider package sent: path, headers (lower-case names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class StubServer:
    """Both wire formats on one local port; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def script(self, *replies: Reply | str) -> None:
        """Queue replies; a plain string is a text reply."""
        with self._lock:
            self._replies.extend(Reply(r) if isinstance(r, str) else r for r in replies)

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def _take(self, request: Request) -> Reply | None:
        with self._lock:
            self.requests.append(request)
            return self._replies.popleft() if self._replies else None


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            headers = {k.lower(): v for k, v in self.headers.items()}
            path = self.path.split("?")[0]
            if path not in ("/v1/chat/completions", "/v1/messages"):
                self._send_json(404, {"error": {"message": f"no route {path}"}})
                return
            reply = stub._take(Request(path, headers, body))
            if reply is None:
                self._send_json(500, {"error": {"message": "stub: no scripted reply left"}})
                return
            openai = path == "/v1/chat/completions"
            model = str(body.get("model", ""))
            if not body.get("stream"):
                self._send_json(200, (_openai_json if openai else _anthropic_json)(reply, model))
                return
            if openai:
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                frames = [f"data: {json.dumps(c)}\n\n" for c in _openai_chunks(reply, model, usage)]
                frames.append("data: [DONE]\n\n")
            else:
                frames = [
                    f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
                    for e in _anthropic_events(reply, model)
                ]
            self._send_stream("".join(frames).encode())

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def _pieces(text: str, size: int = 4) -> Iterator[str]:
    """Text in small chunks, as a streaming API sends it."""
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _openai_json(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _openai_chunks(reply: Reply, model: str, usage: bool) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(reply.text):
        yield chunk({"content": piece})
    for i, (name, args) in enumerate(reply.tool_calls):
        start = {"index": i, "id": f"call_{i}", "type": "function"}
        yield chunk({"tool_calls": [{**start, "function": {"name": name, "arguments": ""}}]})
        for piece in _pieces(json.dumps(args), 8):
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    if usage:
        yield {
            "id": "chatcmpl-stub",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


def _anthropic_json(reply: Reply, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    content += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": args}
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    return {
        "id": "msg_stub",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _anthropic_events(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    message = {**_anthropic_json(reply, model), "content": [], "stop_reason": None}
    message["usage"] = {"input_tokens": 10, "output_tokens": 1}
    yield {"type": "message_start", "message": message}
    index = 0
    if reply.text:
        block = {"type": "text", "text": ""}
        yield {"type": "content_block_start", "index": index, "content_block": block}
        for piece in _pieces(reply.text):
            delta = {"type": "text_delta", "text": piece}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    for i, (name, args) in enumerate(reply.tool_calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}
        yield {"type": "content_block_start", "index": index, "content_block": block}
        for piece in _pieces(json.dumps(args), 8):
            delta = {"type": "input_json_delta", "partial_json": piece}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
        index += 1
    stop = "tool_use" if reply.tool_calls else "end_turn"
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": 5},
    }
    yield {"type": "message_stop"}
