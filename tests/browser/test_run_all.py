"""Notebooks as people run them: Run All in cell order, each cell keeping its own turn after a
reload, and a second tab following the run in flight rather than failing. JupyterLab 4 and
Notebook 7, headless Chromium, the scripted model (exact replies)."""

from __future__ import annotations

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

HELLO = "Hello, first cell."
CHEESE = "Say cheese!"
AFTER_PHOTO = "I can see the test pattern."
SLOW = [f"w{i}" for i in range(1, 601)]  # ~30 s: long enough to open a second tab
AFTER_WAIT = "Your turn came."

SCRIPTS: dict[str, list[Any]] = {
    "run_all": [
        HELLO,
        {"content": CHEESE, "toolCalls": [{"name": "capture_image", "args": {}}]},
        AFTER_PHOTO,
    ],
    "busy": [{"content": " ".join(SLOW), "delayMs": 40}, AFTER_WAIT],
}


def assistant_texts(root: Any) -> list[str]:
    return [t for role, t in transcript(root) if role == "assistant"]


def no_errors(nb: NotebookPage) -> None:
    errors = nb.page.locator(".gth-error").all_inner_texts()
    assert errors == [], errors


def test_run_all_sends_cells_in_order_and_each_keeps_its_turn(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("run_all")
    rel = f"run-all-{jupyter.app}.ipynb"
    write_notebook(
        jupyter.root / rel,
        ["%load_ext gth_jupyter", "%gth hello?", "%gth take a photo of me", "%gth"],
    )
    notebook.open(rel)
    notebook.run_all()
    first, photo = notebook.widget(0), notebook.widget(1)
    expect(first.locator(".gth-msg-assistant")).to_have_text([HELLO], timeout=STEP_MS)
    thumb = photo.locator(".gth-tool[data-tool-name=capture_image] img.gth-thumb")
    expect(thumb).to_be_visible(timeout=STEP_MS)
    expect(photo.locator(".gth-msg-assistant").last).to_have_text(AFTER_PHOTO, timeout=STEP_MS)
    expect(photo).to_have_attribute("data-state", "idle")
    notebook.shot("after-run-all")
    no_errors(notebook)
    assert transcript(first) == [("user", "hello?"), ("assistant", HELLO)]
    assert transcript(photo)[0] == ("user", "take a photo of me")
    assert assistant_texts(photo) == [CHEESE, AFTER_PHOTO]

    # The model saw the cells in kernel order: "hello?" first, the photo request after it.
    records = script.wait_records(3)
    assert [human_messages(r)[-1]["content"] for r in records[:2]] == [
        "hello?",
        "take a photo of me",
    ]

    notebook.save()
    notebook.page.reload()
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    for index in range(3):
        notebook.ready_widget(index)
    first, photo, chat = notebook.widget(0), notebook.widget(1), notebook.widget(2)
    expect(first.locator(".gth-msg-assistant")).to_have_count(1, timeout=STEP_MS)
    assert transcript(first) == [("user", "hello?"), ("assistant", HELLO)]
    assert assistant_texts(photo) == [CHEESE, AFTER_PHOTO]
    assert [t for r, t in transcript(chat) if r == "user"] == ["hello?", "take a photo of me"]
    notebook.shot("after-reload")
    no_errors(notebook)
    assert len(script.records()) == 3  # a reload sent nothing again


def test_a_second_tab_follows_the_run_in_flight_then_takes_its_turn(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    jupyter.use_script("busy")
    rel = f"busy-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth slow answer please"])
    notebook.open(rel)
    notebook.run_all()
    first = notebook.ready_widget(0)
    expect(first).to_have_attribute("data-state", "running", timeout=STEP_MS)
    notebook.save()  # the other tab restores the widget from the saved output and live kernel

    # Another tab on the same notebook (same thread, same turn) while the first run streams:
    # it follows that run live (gth/runs/{id}/events) instead of failing or starting another.
    other = notebook.page.context.new_page()
    other.goto(jupyter.notebook_url(rel))
    second = other.locator(".gth-root").first
    expect(second).to_have_attribute("data-ready", "true", timeout=60_000)
    expect(second).to_have_attribute("data-state", "running", timeout=STEP_MS)
    answer = " ".join(SLOW)
    expect(second.locator(".gth-msg-assistant").last).to_have_text(answer, timeout=60_000)
    expect(second).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    expect(first).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    assert second.locator(".gth-msg-assistant").count() == 1  # shown once, not twice

    # Then it takes its turn on the thread.
    box = second.locator("textarea.gth-input")
    box.fill("me too")
    box.press("Enter")
    expect(second.locator(".gth-msg-assistant").last).to_have_text(AFTER_WAIT, timeout=STEP_MS)
    assert other.locator(".gth-error").count() == 0
    no_errors(notebook)
    other.close()
