"""The short path from a ``%gth`` prompt to its saved copy, JupyterLab 4 and Notebook 7.

A turn the server ran (HTTP) is read once at its end, and the server renders the cell's static
copy from that same read (``GET gth/threads/{id}?turn=…&copy=1``); the page writes it into the
notebook once, through the notebook extension's bridge. The kernel takes no part: no
``turn_end`` goes to it, it sends no display update and imports nothing of the agent
(LangChain, LangGraph). A page reloaded on the answered turn loads its history and the copy in
one read, and writing the same copy again leaves the notebook clean.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    WIDGET_VIEW,
    JupyterServer,
    NotebookPage,
    write_notebook,
)
from playwright.sync_api import Page, WebSocket, expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

ANSWER = "Saved by the **server**."
SCRIPTS: dict[str, list[Any]] = {"once": [ANSWER]}

# In the kernel, before the widget: count the display updates the kernel sends.
COUNT_UPDATES = """\
import IPython.display as _display
gth_updates = []
_update = _display.update_display
def _counting(*args, **kwargs):
    gth_updates.append(kwargs.get("display_id"))
    return _update(*args, **kwargs)
_display.update_display = _counting
%load_ext gth_jupyter"""
# What the kernel did for the turn: display updates, and which agent libraries it imported.
REPORT = """\
import json, sys
_agent = ("langchain", "langchain_core", "langgraph", "gth_jupyter.agent", "gth_jupyter.agui",
          "gth_jupyter.runs", "gth_jupyter.store")
print(json.dumps({"updates": gth_updates,
                  "agent": sorted(m for m in sys.modules if m.startswith(_agent))}))"""
# On the page, from its start: each static copy handed to the notebook extension, and whether
# the bridge found the output it names.
WATCH_BRIDGE = """
window.__gthStaticCopies = [];
let bridge;
Object.defineProperty(globalThis, "__gth_jupyter_notebook__", {
  configurable: true,
  get: () => bridge,
  set(value) {
    const find = value.find.bind(value);
    value.find = (query) => {
      const handle = find(query);
      if (handle) {
        const set = handle.setStaticCopy.bind(handle);
        handle.setStaticCopy = (copy) => {
          const result = set(copy);
          window.__gthStaticCopies.push([copy.displayId, result]);
          return result;
        };
      }
      return handle;
    };
    bridge = value;
  },
});
"""
THREAD_READ = re.compile(r"/gth/threads/[^/?]+(\?|$)")
RUN = re.compile(r"/gth/agents/[^/]+/run$")


class Traffic:
    """What the page asks the server for its threads, and what goes over its kernel websockets."""

    def __init__(self, page: Page) -> None:
        #: The page's reads of a thread, and ``"run"`` where it started a run.
        self.requests: list[str] = []
        self.sent: list[str] = []
        self.received: list[str] = []
        page.on("request", self._request)
        page.on("websocket", self._socket)

    def _request(self, request: Any) -> None:
        if request.method == "GET" and THREAD_READ.search(request.url):
            self.requests.append(request.url)
        elif request.method == "POST" and RUN.search(request.url):
            self.requests.append("run")

    @property
    def reads(self) -> list[str]:
        return [r for r in self.requests if r != "run"]

    def reads_after_run(self) -> list[str]:
        """The thread reads since the (last) run started: what its end costs."""
        runs = [i for i, r in enumerate(self.requests) if r == "run"]
        return self.requests[runs[-1] + 1 :] if runs else []

    def _socket(self, socket: WebSocket) -> None:
        if "/api/kernels/" not in socket.url:
            return
        socket.on("framesent", lambda payload: self.sent.append(_text(payload)))
        socket.on("framereceived", lambda payload: self.received.append(_text(payload)))

    def turn_ends(self) -> int:
        return sum('"turn_end"' in frame for frame in self.sent)

    def display_updates(self) -> int:
        return sum('"update_display_data"' in frame for frame in self.received)


def _text(payload: str | bytes) -> str:
    return payload if isinstance(payload, str) else payload.decode("utf-8", "replace")


def report(notebook: NotebookPage, index: int) -> dict[str, Any]:
    notebook.run_cell(index)
    text = notebook.cells.nth(index).locator(".jp-OutputArea-output").inner_text()
    return dict(json.loads(text))


def copies(page: Page) -> list[list[Any]]:
    return list(page.evaluate("() => window.__gthStaticCopies"))


def test_a_live_turn_reads_its_thread_once_and_writes_its_copy_once(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("once")
    rel = f"copy-path-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, [COUNT_UPDATES, "%gth hello?", REPORT])
    notebook.page.add_init_script(WATCH_BRIDGE)
    traffic = Traffic(notebook.page)
    notebook.open(rel)
    notebook.run_cells(0, 1)
    widget = notebook.ready_widget(0)
    expect(widget.locator(".gth-msg-assistant strong")).to_have_text("server", timeout=STEP_MS)
    expect(widget).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.page.wait_for_function("() => window.__gthStaticCopies.length >= 1", timeout=STEP_MS)
    kernel = report(notebook, 2)
    print(
        "live turn:",
        {
            "thread reads": traffic.requests,
            "bridge writes": copies(notebook.page),
            "turn_end to the kernel": traffic.turn_ends(),
            "kernel display updates": kernel["updates"],
            "agent modules in the kernel": len(kernel["agent"]),
        },
    )
    # One read at the turn's end, with the copy the server rendered from it.
    [end] = traffic.reads_after_run()
    assert end.endswith("&copy=1"), traffic.requests
    # Written once, by the page, into the notebook; the kernel takes no part.
    [[display_id, found]] = copies(notebook.page)
    assert found is True
    assert traffic.turn_ends() == 0
    assert kernel["updates"] == [] and traffic.display_updates() == 0
    assert kernel["agent"] == [], "the kernel imported agent code for a turn the server ran"

    notebook.save()
    saved = jupyter.api("GET", f"api/contents/{rel}?content=1")["content"]["cells"][1]
    (output,) = saved["outputs"]
    assert output["metadata"]["gth_jupyter"]["display"] == display_id
    assert WIDGET_VIEW in output["data"]
    assert "<strong>server</strong>" in "".join(output["data"]["text/html"])
    assert ANSWER in "".join(output["data"]["text/plain"])

    # Reloaded on the answered turn: the history and the copy come in one read; the same copy
    # written again changes nothing (the notebook stays clean) and the kernel is not asked.
    traffic.requests.clear()
    traffic.sent.clear()
    notebook.page.reload()
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    widget = notebook.ready_widget(0)
    expect(widget.locator(".gth-msg-assistant strong")).to_have_text("server", timeout=STEP_MS)
    notebook.page.wait_for_function("() => window.__gthStaticCopies.length >= 1", timeout=STEP_MS)
    print("reload:", {"thread reads": traffic.reads, "bridge writes": copies(notebook.page)})
    assert len(traffic.reads) == 1 and "copy=1" in traffic.reads[0], traffic.reads
    assert copies(notebook.page) == [[display_id, True]]
    assert traffic.turn_ends() == 0
    if jupyter.app == "lab":
        expect(notebook.page.locator(".lm-TabBar-tab.jp-mod-current")).not_to_have_class(
            re.compile("jp-mod-dirty")
        )
    assert len(script.records()) == 1  # the reload sent nothing again
