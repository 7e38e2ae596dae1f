"""A ``%gth`` cell's answer reaches the saved file: JupyterLab 4 and Notebook 7 run the cell, the
turn runs in the server (HTTP), the page tells the kernel the turn ended, the kernel rewrites the
cell's output, and saving stores the answer beside the widget; nbconvert's HTML shows it."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    WIDGET_VIEW,
    JupyterServer,
    NotebookPage,
    transcript,
    write_notebook,
)
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

HELLO = "Hello from the **saved** answer."
SLOW = [f"w{i}" for i in range(1, 301)]  # ~12 s: long enough to reload the page mid-turn
SCRIPTS: dict[str, list[Any]] = {
    "saved": [HELLO],
    "reload": [{"content": " ".join(SLOW) + " **reloaded**", "delayMs": 40}],
}
# The kernel reads the server's threads from the shared SQLite file, as by default.
CHECKPOINTER = "sqlite"


def saved_cells(notebook: NotebookPage, until: Any, timeout_s: float = 60) -> list[Any]:
    """Saves (Ctrl+S, again every few seconds) until the file's cells satisfy ``until``: the
    kernel's display update comes after the run's end, so an early save holds the waiting copy."""
    deadline = time.monotonic() + timeout_s
    again = 0.0
    while True:
        if time.monotonic() > again:
            notebook.cells.first.locator(".jp-InputPrompt").click()
            notebook.page.keyboard.press("Control+s")
            again = time.monotonic() + 3
        try:
            model = notebook.server.api("GET", f"api/contents/{notebook.rel_path}?content=1")
        except urllib.error.HTTPError:  # read while Jupyter was writing it
            model = {"content": {"cells": []}}
        cells = model["content"]["cells"]
        if cells and until(cells):
            return list(cells)
        if time.monotonic() > deadline:
            raise AssertionError(f"the saved notebook never held the answer: {cells}")
        time.sleep(0.2)


def answered(word: str) -> Any:
    def check(cells: list[Any]) -> bool:
        outputs = cells[1].get("outputs", [])
        return any(word in str(o.get("data", {}).get("text/plain", "")) for o in outputs)

    return check


def test_the_answer_is_saved_as_a_static_copy_beside_the_widget(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    jupyter.use_script("saved")
    rel = f"saved-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth hello?"])
    notebook.open(rel)
    notebook.run_all()
    widget = notebook.ready_widget(0)
    expect(widget.locator(".gth-msg-assistant strong")).to_have_text("saved", timeout=STEP_MS)
    expect(widget).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    # Each answer is shown once: the widget, not the static copy beside it.
    expect(notebook.page.locator(".gth-static-copy")).to_have_count(0)
    assert [role for role, _ in transcript(widget)] == ["user", "assistant"]

    cells = saved_cells(notebook, answered("saved"))
    # The kernel's update drew the widget again, once: one chat in the cell, its turn shown once.
    chats = notebook.cells.nth(1).locator(".gth-root")
    expect(chats).to_have_count(1)
    expect(chats.first.locator(".gth-msg-assistant")).to_have_count(1, timeout=STEP_MS)
    assert notebook.page.locator(".gth-error").all_inner_texts() == []
    (output,) = cells[1]["outputs"]  # one output: no cell value (execute_result) beside it
    assert output["output_type"] == "display_data"
    data = output["data"]
    assert WIDGET_VIEW in data
    assert "Hello from the" in data["text/plain"] and "GthChat object" not in str(data)
    assert "<strong>saved</strong>" in data["text/html"]
    assert output["metadata"]["gth_jupyter"]["display"].startswith("gth-")

    # Where widgets do not run, the copy is what people read.
    path = jupyter.root / rel
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    html = path.with_suffix(".html").read_text(encoding="utf-8")
    assert "<strong>saved</strong>" in html and "gth-static-copy" in html
    assert "GthChat object" not in html


def test_a_turn_that_ends_after_a_reload_still_reaches_the_saved_file(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """JupyterLab sends the kernel's display update only to the page that ran the cell: the
    reloaded page hands the kernel's copy to the notebook through the notebook extension."""
    script = jupyter.use_script("reload")
    rel = f"reload-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth a long one, please"])
    notebook.open(rel)
    notebook.run_all()
    widget = notebook.ready_widget(0)
    expect(widget).to_have_attribute("data-state", "running", timeout=STEP_MS)
    notebook.save()  # the reloaded page restores the widget from the saved output
    notebook.page.reload()
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    widget = notebook.ready_widget(0)
    expect(widget.locator(".gth-msg-assistant strong")).to_have_text("reloaded", timeout=60_000)
    expect(widget).to_have_attribute("data-state", "idle", timeout=STEP_MS)

    cells = saved_cells(notebook, answered("reloaded"))
    (output,) = cells[1]["outputs"]
    assert WIDGET_VIEW in output["data"]  # the live widget stays beside the copy
    assert "<strong>reloaded</strong>" in output["data"]["text/html"]
    assert len(script.records()) == 1  # the reload sent nothing again
