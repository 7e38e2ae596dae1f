"""Local stand-ins for the OpenAI, Anthropic, Ollama and Gemini HTTP APIs, for the real provider
packages to call.

:class:`StubServer` listens on 127.0.0.1 in a thread and speaks four wire formats:

- ``POST /v1/chat/completions`` (OpenAI chat completions): a JSON reply, or with ``"stream": true``
  server-sent ``data: {chunk}`` lines with ``choices[0].delta`` (text, then ``tool_calls`` deltas
  whose ``arguments`` arrive in pieces), a usage chunk when asked for (``OPENAI_USAGE``), and
  ``data: [DONE]``.
- ``POST /v1/messages`` (Anthropic messages): a JSON reply, or with ``"stream": true`` the events
  ``message_start``, ``content_block_start`` / ``_delta`` / ``_stop`` (``text_delta``, and
  ``input_json_delta`` for ``tool_use``), ``message_delta`` and ``message_stop``.

- ``POST /api/chat`` (Ollama): newline-delimited JSON lines, the last ``done`` with the counts.
- ``POST /v1[beta]/models/{model}:streamGenerateContent?alt=sse`` (Gemini, as the google-genai SDK
  calls it): ``data:`` chunks of ``candidates`` parts, each with the cumulative
  ``usageMetadata``.

Replies are scripted (:meth:`StubServer.script`) and served in order, whichever format is asked
for; every request is recorded with its headers and JSON body. With nothing scripted the stub
answers 500, so an unexpected model call fails the test that made it.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# What each streamed call reports, as the provider reports it: OpenAI's usage chunk (sent when
# ``stream_options.include_usage`` asks for it) with cached prompt and reasoning tokens inside
# its totals; Anthropic's input counts (cache reads and writes beside the uncached input) in
# ``message_start`` and again, with the output count, in ``message_delta``.
OPENAI_USAGE: dict[str, Any] = {
    "prompt_tokens": 1204,
    "completion_tokens": 356,
    "total_tokens": 1560,
    "prompt_tokens_details": {"cached_tokens": 812},
    "completion_tokens_details": {"reasoning_tokens": 120},
}
ANTHROPIC_START_USAGE: dict[str, Any] = {
    "input_tokens": 300,
    "cache_read_input_tokens": 812,
    "cache_creation_input_tokens": 92,
}
ANTHROPIC_OUTPUT_TOKENS = 356
# Ollama's last line: the prompt's and the answer's counts (no cache, no reasoning count).
OLLAMA_USAGE: dict[str, Any] = {"prompt_eval_count": 640, "eval_count": 75}
# Gemini's usageMetadata, cumulative on every chunk: thoughts beside the candidates' tokens.
GEMINI_USAGE: dict[str, Any] = {
    "promptTokenCount": 900,
    "candidatesTokenCount": 80,
    "thoughtsTokenCount": 40,
    "cachedContentTokenCount": 512,
    "totalTokenCount": 1020,
}
_GEMINI_PATH = re.compile(r"/v1(?:beta)?/models/([^/:]+):(streamGenerateContent|generateContent)")


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
            gemini = _GEMINI_PATH.fullmatch(path)
            if path not in ("/v1/chat/completions", "/v1/messages", "/api/chat") and not gemini:
                self._send_json(404, {"error": {"message": f"no route {path}"}})
                return
            reply = stub._take(Request(path, headers, body))
            if reply is None:
                self._send_json(500, {"error": {"message": "stub: no scripted reply left"}})
                return
            if path == "/api/chat":  # Ollama: newline-delimited JSON, streamed by default
                lines = _ollama_lines(reply, str(body.get("model", "")))
                if body.get("stream") is False:
                    self._send_json(200, list(lines)[-1])
                else:
                    data = "".join(json.dumps(line) + "\n" for line in lines)
                    self._send_stream(data.encode(), "application/x-ndjson")
                return
            if gemini:
                chunks = list(_gemini_chunks(reply, gemini.group(1)))
                if gemini.group(2) == "generateContent":
                    self._send_json(200, chunks[-1])
                else:
                    frames = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks)
                    self._send_stream(frames.encode())
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

        def _send_stream(self, data: bytes, kind: str = "text/event-stream") -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
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
            "usage": OPENAI_USAGE,
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
    message["usage"] = {**ANTHROPIC_START_USAGE, "output_tokens": 1}
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
        # The API repeats the input counts here, and langchain-anthropic reads them here.
        "usage": {**ANTHROPIC_START_USAGE, "output_tokens": ANTHROPIC_OUTPUT_TOKENS},
    }
    yield {"type": "message_stop"}


def _ollama_lines(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """``/api/chat`` as Ollama streams it: one line per text piece, the tool calls whole on
    a line of their own, then a ``done`` line with the counts."""

    def line(message: dict[str, Any], **more: Any) -> dict[str, Any]:
        return {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": message, **more}

    for piece in _pieces(reply.text):
        yield line({"role": "assistant", "content": piece}, done=False)
    if reply.tool_calls:
        calls = [{"function": {"name": n, "arguments": a}} for n, a in reply.tool_calls]
        yield line({"role": "assistant", "content": "", "tool_calls": calls}, done=False)
    yield line(
        {"role": "assistant", "content": ""},
        done=True,
        done_reason="stop",
        total_duration=1,
        **OLLAMA_USAGE,
    )


def _gemini_chunks(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """``streamGenerateContent?alt=sse`` as Gemini sends it: text parts, then function calls,
    each chunk with the usage so far (the counts grow to ``GEMINI_USAGE``)."""
    parts: list[dict[str, Any]] = [{"text": piece} for piece in _pieces(reply.text)]
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in reply.tool_calls]
    parts = parts or [{"text": ""}]
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        usage = dict(GEMINI_USAGE)
        if not last:
            usage["candidatesTokenCount"] = i + 1
            usage["totalTokenCount"] = usage["promptTokenCount"] + i + 1
            usage["thoughtsTokenCount"] = GEMINI_USAGE["thoughtsTokenCount"]
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
        if last:
            candidate["finishReason"] = "STOP"
        yield {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model}
