"""Issue 8, item 2: gth_web_fetch must not reach loopback, private or metadata addresses.

A real loopback HTTP server plays both the target and the redirector. Every refusal must happen
before a byte is sent: the server records each request it gets, and the refused ones never arrive.
No test sends traffic anywhere but loopback (the refused addresses are refused before connecting).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from gth_jupyter.tools.net_guard import HostPolicy
from gth_jupyter.tools.web_fetch import make_web_fetch_tool
from tests.tools.conftest import run_call

SEEN: list[tuple[str, str]] = []  # (path, Host header) of every request the server answered


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        SEEN.append((self.path, self.headers.get("Host", "")))
        if self.path.startswith("/to?"):  # /to?<url>: a redirect to <url>
            self.send_response(302)
            self.send_header("Location", self.path.split("?", 1)[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/loop/"):  # an endless chain of redirects
            self.send_response(302)
            self.send_header("Location", f"/loop/{int(self.path.split('/')[2]) + 1}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"internal secret"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


async def fetch(url: str, **settings: Any) -> Any:
    result = await run_call([make_web_fetch_tool(settings)], "gth_web_fetch", {"input": url})
    return result.message


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("127.0.0.1", "loopback"),
        ("localhost", "loopback"),
        ("[::1]", "loopback"),
        ("2130706433", "loopback"),  # 127.0.0.1 as one decimal number
        ("0x7f.1", "loopback"),  # and as hex with a short form
        ("[::ffff:127.0.0.1]", "loopback"),  # IPv4-mapped IPv6
        ("0.0.0.0", "unspecified"),
    ],
)
async def test_direct_fetches_of_loopback_are_refused_before_connecting(
    port: int, host: str, rule: str
) -> None:
    before = len(SEEN)
    message = await fetch(f"http://{host}:{port}/secret")
    assert message.status == "error"
    assert message.content.startswith(f"Refused to fetch http://{host}:{port}/secret")
    assert f"(rule: {rule})" in message.content
    assert "builtInTools.gth_web_fetch.allowHosts" in message.content
    assert len(SEEN) == before  # nothing reached the server


@pytest.mark.parametrize(
    ("target", "rule"),
    [
        ("http://127.0.0.1:{port}/secret", "loopback"),
        ("http://[::1]:{port}/secret", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
    ],
)
async def test_a_redirect_from_an_allowed_host_is_refused_at_the_hop(
    port: int, target: str, rule: str
) -> None:
    target = target.format(port=port)
    start = f"http://localhost:{port}/to?{target}"
    before = len(SEEN)
    message = await fetch(start, allowHosts=["localhost"])
    assert message.status == "error"
    assert message.content.startswith(f"Refused to follow the redirect from {start} to {target}")
    assert f"(rule: {rule})" in message.content
    assert [path for path, _ in SEEN[before:]] == [f"/to?{target}"]  # the hop was never sent


async def test_allow_hosts_opens_named_hosts_and_suffixes(port: int) -> None:
    message = await fetch(f"http://localhost:{port}/secret", allowHosts=["localhost"])
    assert message.status == "success" and message.content == "internal secret"
    assert SEEN[-1] == ("/secret", f"localhost:{port}")
    suffix = await fetch(f"http://localhost:{port}/secret", allowHosts=["*.localhost"])
    assert suffix.status == "error" and "(rule: loopback)" in suffix.content
    # A redirect between allowed hosts is followed, and each hop keeps its own Host header.
    chain = f"http://localhost:{port}/to?http://127.0.0.1:{port}/secret"
    both = await fetch(chain, allowHosts=["localhost", "127.0.0.1"])
    assert both.content == "internal secret"
    assert SEEN[-1] == ("/secret", f"127.0.0.1:{port}")


async def test_at_most_five_redirects_are_followed(port: int) -> None:
    before = len(SEEN)
    message = await fetch(f"http://127.0.0.1:{port}/loop/0", allowHosts=["127.0.0.1"])
    assert message.status == "error" and message.content.endswith("more than 5 redirects")
    assert len(SEEN) - before == 6


async def test_a_redirect_to_another_scheme_is_refused(port: int) -> None:
    start = f"http://127.0.0.1:{port}/to?file:///etc/passwd"
    message = await fetch(start, allowHosts=["127.0.0.1"])
    assert message.status == "error"
    assert message.content.startswith(f"Refused to follow the redirect from {start} to file:")
    assert message.content.endswith(": URL must start with http:// or https://")


async def test_the_connection_goes_to_the_checked_address(
    port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a second lookup would answer 127.0.0.2, where nothing listens; the fetch
    works only because the connection goes to the one address that was resolved and checked."""
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.test":
            lookups.append(host)
            host = "127.0.0.1" if len(lookups) == 1 else "127.0.0.2"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    message = await fetch(f"http://rebind.test:{port}/secret", allowHosts=["rebind.test"])
    assert message.content == "internal secret"
    assert lookups == ["rebind.test"]
    assert SEEN[-1] == ("/secret", f"rebind.test:{port}")


def test_allow_hosts_matching() -> None:
    policy = HostPolicy.of(["LocalHost.", "*.corp.example", "[::1]"])
    assert policy.opens("localhost") and policy.opens("[::1]") and policy.opens("a.b.corp.example")
    assert not policy.opens("corp.example") and not policy.opens("evilcorp.example")
    assert HostPolicy.of("localhost").opens("localhost")  # a lone string is one host
    assert not HostPolicy.of(None).opens("localhost")
