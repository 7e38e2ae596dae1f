"""A page reload in the middle of a run (JupyterLab 4 and Notebook 7, headless Chromium, the
scripted model): the run goes on on the server (the widget asks for ``detach``), and the widget
of the reloaded page rebuilds the transcript from the thread's history, then follows the run
(``GET gth/runs/{runId}/events``) to its end, every message shown once and the answer whole.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import struct
import threading
import time
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    human_messages,
    transcript,
    write_notebook,
)
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

PROMPT = "tell me a long story"
# 300 tokens in six paragraphs, each word unique, so a paragraph shown twice (or a word lost)
# shows in the word list; at 60 ms a token the answer takes some 18 s, long enough to save and
# reload the page in the middle of it on a loaded machine (a reload takes 3 to 8 s).
PARAGRAPHS = [" ".join(f"p{p}w{w}" for w in range(1, 51)) for p in range(1, 7)]
ANSWER = "\n\n".join(PARAGRAPHS)
WORDS = ANSWER.split()
TOKEN_DELAY_MS = 60
# Before the long answer, the same run says a line and draws an A2UI surface (a server tool):
# by the reload they are in the thread's checkpoint, so the history shows them, and the run's
# events replayed from its start must not show them again.
FIRST = "Let me draw the title first."
SURFACE_JSONL = "\n".join(
    json.dumps(m)
    for m in [
        {
            "surfaceUpdate": {
                "surfaceId": "story_title",
                "components": [
                    {"id": "root", "component": {"Column": {"children": {"explicitList": ["t"]}}}},
                    {
                        "id": "t",
                        "component": {
                            "Text": {"text": {"literalString": "A long story"}, "usageHint": "h3"}
                        },
                    },
                ],
            }
        },
        {"beginRendering": {"surfaceId": "story_title", "root": "root"}},
    ]
)

SCRIPTS: dict[str, list[Any]] = {
    "reload_mid_run": [
        {
            "content": FIRST,
            "toolCalls": [{"name": "show_a2ui_surface", "args": {"surfaceJsonl": SURFACE_JSONL}}],
        },
        {"content": ANSWER, "delayMs": TOKEN_DELAY_MS},
    ],
    "lost_connection": [{"content": ANSWER, "delayMs": 40}],
}


def assistant(root: Any) -> Any:
    return root.locator(".gth-msg-assistant .gth-msg-content")


def test_reload_mid_run_follows_the_run_to_its_end(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("reload_mid_run")
    rel = f"reattach-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", f"%gth {PROMPT}", ""])
    notebook.open(rel)
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()
    expect(root).to_have_attribute("data-transport", "http")
    text = assistant(root).nth(1)
    expect(text).to_contain_text("p1w5", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "running")
    card = root.locator(".gth-tool[data-tool-name=show_a2ui_surface]")
    expect(card).to_have_count(1)
    expect(root.locator(".gth-a2ui-surface")).to_have_count(1)
    thread_id = str(root.get_attribute("data-thread-id"))
    # A reload restores the widget only from the saved notebook.
    notebook.save()
    assert jupyter.thread(thread_id)["busy"] is True, "the run ended before the reload"
    shown_before = text.inner_text().split()
    assert 5 <= len(shown_before) < len(WORDS), shown_before
    notebook.shot("before-reload")

    attached: list[str] = []  # GET gth/runs/{runId}/events
    posted: list[str] = []  # POST gth/agents/{name}/run

    def seen(request: Any) -> None:
        if "/gth/runs/" in request.url:
            attached.append(request.url)
        elif request.url.endswith("/run"):
            posted.append(request.url)

    notebook.page.on("request", seen)
    notebook.page.reload()
    notebook.mark("reloaded")
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    root = notebook.ready_widget()
    assert root.get_attribute("data-thread-id") == thread_id
    expect(assistant(root)).to_have_count(2, timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=60_000)
    notebook.mark("run followed to its end")
    notebook.shot("after-reload")

    # Every message once, the answer whole: the line and the surface from the history, the
    # answer that was streaming with every word in order.
    shown = transcript(root)
    assert shown == [("user", PROMPT), ("assistant", FIRST), ("assistant", shown[2][1])]
    assert assistant(root).nth(1).inner_text().split() == WORDS
    expect(root.locator(".gth-tool[data-tool-name=show_a2ui_surface]")).to_have_count(1)
    expect(root.locator(".gth-a2ui-surface")).to_have_count(1)
    assert root.locator(".gth-error").count() == 0, root.locator(".gth-error").all_inner_texts()
    # It followed the run in flight (the rest of the answer streamed into this page), and
    # sent nothing again.
    assert any(re.search(r"/gth/runs/[^/]+/events$", u) for u in attached), (
        f"the reloaded widget did not follow the run in flight: {attached}"
    )
    assert posted == [], f"the reloaded widget posted a run: {posted}"

    # The run completed on the server (once: the model was called once) and let go of the thread.
    deadline = time.monotonic() + 10
    while jupyter.thread(thread_id)["busy"] and time.monotonic() < deadline:
        time.sleep(0.2)
    view = jupyter.thread(thread_id)
    assert view["busy"] is False
    assert "run" not in view
    answers = [m for m in view["messages"] if m["role"] == "assistant"]
    assert [m["content"].split() for m in answers] == [FIRST.split(), WORDS]
    records = script.wait_records(2)
    assert len(records) == 2
    assert human_messages(records[0])[-1]["content"] == PROMPT


class CuttingProxy:
    """A TCP proxy in front of the Jupyter server that can cut the connections a run streams
    on (those that carried ``POST …/gth/agents/…/run``), as a network blip or a restarting
    server process behind a balancer would; the page's other connections (the kernel's
    websocket) are left alone."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.conns: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                client.close()
                continue
            conn = {"client": client, "upstream": upstream, "run": False}
            with self.lock:
                self.conns.append(conn)
            threading.Thread(
                target=self._pipe, args=(conn, client, upstream, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pipe, args=(conn, upstream, client, False), daemon=True
            ).start()

    def _pipe(
        self, conn: dict[str, Any], src: socket.socket, dst: socket.socket, sniff: bool
    ) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if sniff and b"POST " in data and b"/gth/agents/" in data:
                    conn["run"] = True
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def cut_runs(self) -> int:
        """Reset every connection a run went over; how many there were."""
        with self.lock:
            runs = [c for c in self.conns if c["run"]]
            self.conns = [c for c in self.conns if not c["run"]]
        for conn in runs:
            for sock in (conn["client"], conn["upstream"]):
                with contextlib.suppress(OSError):
                    # An abortive close (RST), as a dropped route or a killed process gives;
                    # shutdown first, or the pipe thread blocked in recv keeps the socket open.
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
        return len(runs)

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.listener.close()
        with self.lock:
            conns, self.conns = self.conns, []
        for conn in conns:
            for sock in (conn["client"], conn["upstream"]):
                with contextlib.suppress(OSError):
                    sock.close()


def test_lost_connection_mid_run_goes_on_from_the_last_event(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """The connection a run streams on is cut while the answer streams: the widget re-attaches
    with ``Last-Event-ID`` and the answer arrives whole, each word once, without an error."""
    script = jupyter.use_script("lost_connection")
    rel = f"blip-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", f"%gth {PROMPT}", ""])
    proxy = CuttingProxy(jupyter.port)
    try:
        reattached: list[dict[str, str]] = []

        def seen(request: Any) -> None:
            if re.search(r"/gth/runs/[^/]+/events", request.url):
                reattached.append(request.headers)

        notebook.page.on("request", seen)
        # The notebook through the proxy (the page's requests are same-origin: all go through it).
        notebook.rel_path = rel
        url = jupyter.notebook_url(rel).replace(f":{jupyter.port}/", f":{proxy.port}/")
        notebook.page.goto(url)
        expect(notebook.cells.first).to_be_visible(timeout=60_000)
        notebook.wait_kernel(rel)
        notebook.run_cells(0, 1)
        root = notebook.ready_widget()
        text = assistant(root).first
        expect(text).to_contain_text("p1w20", timeout=STEP_MS)
        assert proxy.cut_runs() >= 1
        notebook.mark("connection cut")
        expect(root).to_have_attribute("data-state", "idle", timeout=60_000)
        notebook.shot("after-cut")
        errors = root.locator(".gth-error").all_inner_texts()
        assert errors == []
        assert text.inner_text().split() == WORDS
        assert reattached, "the widget did not re-attach to the run"
        assert int(reattached[0].get("last-event-id", "0")) > 20, reattached[0]
        thread_id = str(root.get_attribute("data-thread-id"))
        assert jupyter.thread(thread_id)["busy"] is False
        assert len(script.wait_records(1)) == 1
    finally:
        proxy.close()
