"""gth_web_fetch against a real local HTTP server: body, errors, byte cap, timeout."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gth_jupyter.tools.web_fetch import make_web_fetch_tool

from .conftest import run_call

SEEN: list[dict[str, str]] = []
#: The test server is on loopback, which gth_web_fetch refuses unless a config opens it.
LOCAL = {"allowHosts": ["127.0.0.1"]}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        SEEN.append(dict(self.headers))
        if self.path == "/slow":
            time.sleep(2)
        if self.path == "/missing":
            self.send_error(404, "Not Found")
            return
        body = b"x" * 5000 if self.path == "/big" else "h\u00e9llo".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the timeout test hangs up on purpose


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = QuietServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


async def test_fetches_the_body_as_text_with_gaunt_sloths_argument(server: str) -> None:
    tool = make_web_fetch_tool(LOCAL)
    assert list(tool.tool_call_schema.model_json_schema()["properties"]) == ["input"]
    assert await tool.ainvoke({"input": f"{server}/page"}) == "h\u00e9llo"
    assert SEEN[-1]["Accept"] == "text/*"
    assert tool.metadata == {"gth_kind": "network"}
    assert SEEN[-1]["Host"] == server.removeprefix("http://")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/file", "URL must start with http:// or https://"),
        ("file:///etc/passwd", "URL must start with http:// or https://"),
        ("not a url", "Invalid URL provided"),
        ("http://", "Invalid URL provided"),
    ],
)
async def test_bad_urls_are_error_results(url: str, message: str) -> None:
    result = await run_call([make_web_fetch_tool(LOCAL)], "gth_web_fetch", {"input": url})
    assert result.message.status == "error" and result.message.content == message


async def test_http_errors_name_the_status(server: str) -> None:
    result = await run_call(
        [make_web_fetch_tool(LOCAL)], "gth_web_fetch", {"input": f"{server}/missing"}
    )
    assert result.message.status == "error"
    assert result.message.content == (
        f"Failed to fetch data from {server}/missing with status: 404 - Not Found"
    )


async def test_the_byte_cap_and_the_timeout_are_configurable(server: str) -> None:
    capped = await make_web_fetch_tool({**LOCAL, "maxBytes": 100}).ainvoke(
        {"input": f"{server}/big"}
    )
    assert capped == "x" * 100 + "\n... [gth_web_fetch: response truncated at 100 bytes] ..."
    started = time.monotonic()
    slow = await make_web_fetch_tool({**LOCAL, "timeout": 200}).ainvoke({"input": f"{server}/slow"})
    assert time.monotonic() - started < 1.5
    assert slow == f"Failed to fetch data from {server}/slow: no complete answer within 0.2s"
