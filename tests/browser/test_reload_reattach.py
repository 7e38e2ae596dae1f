"""A page reload in the middle of a run (JupyterLab 4 and Notebook 7, headless Chromium, the
scripted model): the run goes on on the server (the widget asks for ``detach``), and the widget
of the reloaded page rebuilds the transcript from the thread's history, then follows the run
(``GET gth/runs/{runId}/events``) to its end, every message shown once and the answer whole.
"""

from __future__ import annotations

import re
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
# shows in the word list; at 100 ms a token the answer takes some 30 s, long enough to reload
# the page in the middle of it.
PARAGRAPHS = [" ".join(f"p{p}w{w}" for w in range(1, 51)) for p in range(1, 7)]
ANSWER = "\n\n".join(PARAGRAPHS)
WORDS = ANSWER.split()
TOKEN_DELAY_MS = 100

SCRIPTS: dict[str, list[Any]] = {
    "reload_mid_run": [{"content": ANSWER, "delayMs": TOKEN_DELAY_MS}],
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
    text = assistant(root).first
    expect(text).to_contain_text("p1w5", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "running")
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
    expect(assistant(root)).to_have_count(1, timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=60_000)
    notebook.mark("run followed to its end")
    notebook.shot("after-reload")

    # The whole answer, exactly once: one assistant message holding every word in order.
    assert transcript(root) == [("user", PROMPT), ("assistant", transcript(root)[1][1])]
    assert assistant(root).first.inner_text().split() == WORDS
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
    assert [m["content"].split() for m in answers] == [WORDS]
    records = script.wait_records(1)
    assert len(records) == 1
    assert human_messages(records[0])[-1]["content"] == PROMPT
