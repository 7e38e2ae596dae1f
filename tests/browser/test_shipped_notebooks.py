"""The notebooks in notebooks/, as shipped, on the offline demo model: Run All in JupyterLab 4
and Notebook 7, and every cell shows what it should (its own reply, the photo and what became of
it, the form, the tool results; ``%gth`` alone the whole thread, the photo included), with no
error anywhere. ``data-agent.ipynb`` runs in test_data_agent.py (its plot waits on Approve)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from browser_harness import CHROMIUM, STEP_MS, JupyterServer, NotebookPage
from playwright.sync_api import expect

from gth_jupyter.config._jsonc import loads

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(300),
]

SHIPPED = Path(__file__).resolve().parents[2] / "notebooks"
# The server runs on the configuration shipped beside the notebooks (the demo model), and
# keeps its threads in SQLite as it does by default, shared with the kernel's Session.
CONFIG = loads((SHIPPED / ".gsloth.config.json").read_text())
CHECKPOINTER = "sqlite"
SCRIPTS: dict[str, list[object]] = {"default": []}
# A turn's cost line on the demo model.
COST_LINE = re.compile(r"^[\d,]+ in · [\d,]+ out · \$0\.00$")


def copy_shipped(jupyter: JupyterServer) -> str:
    folder = f"shipped-{jupyter.app}"
    target = jupyter.root / folder
    if not target.exists():
        shutil.copytree(SHIPPED, target)
    return folder


def no_errors(nb: NotebookPage) -> None:
    assert nb.page.locator(".gth-error").all_inner_texts() == []
    outputs = nb.page.locator(".jp-OutputArea-output[data-mime-type*=stderr]").all_inner_texts()
    assert not [o for o in outputs if "Error" in o or "Traceback" in o], outputs


def said(view: dict[str, Any]) -> list[tuple[str, str]]:
    """The conversation a thread holds, as the model is sent it: each message's role, the
    person's text, and the tools the assistant called (a dice roll's result differs by chance)."""
    shown: list[tuple[str, str]] = []
    for m in view["messages"]:
        if m["role"] == "user":
            shown.append(("user", str(m.get("content", ""))))
        elif m["role"] == "assistant":
            calls = ",".join(c["function"]["name"] for c in m.get("toolCalls", []))
            shown.append(("assistant", calls))
        elif m["role"] == "tool":
            shown.append(("tool", ""))
    return shown


def run_all_again(notebook: NotebookPage, jupyter: JupyterServer, thread_id: str) -> None:
    """Run All a second time: each cell replaces its turn, so the thread holds the same
    conversation as after the first (not both): the context the model is sent is the thread's,
    so each call of the second Run All saw what the first one's did."""
    first = jupyter.thread(thread_id)
    notebook.run_all(timeout_s=240)
    roots = notebook.page.locator(".gth-root")
    deadline = time.monotonic() + STEP_MS / 1000
    while True:
        second = jupyter.thread(thread_id)
        # Done once the new branch holds every turn again (right after Run All, before the
        # first cell's run starts, the thread is still the first Run All's: one branch).
        done = not second["busy"] and len(second["branches"]) == 2
        if done and said(second) == said(first):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"the second Run All's thread: {said(second)} != {said(first)}")
        time.sleep(0.3)
    for index in range(roots.count()):
        expect(roots.nth(index)).to_have_attribute("data-state", "idle", timeout=STEP_MS)


def assistant(root: object) -> object:
    return root.locator(".gth-msg-assistant .gth-msg-content")  # type: ignore[attr-defined]


def test_quickstart_run_all(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    folder = copy_shipped(jupyter)
    notebook.open(f"{folder}/quickstart.ipynb")
    notebook.run_all(timeout_s=240)
    hello, photo, form, chat = (notebook.widget(i) for i in range(4))
    expect(hello.locator(".gth-msg-user")).to_have_text("Hello! What can you do?")
    expect(assistant(hello)).to_contain_text("gth-demo", timeout=STEP_MS)
    camera = photo.locator(".gth-tool[data-tool-name=capture_image]")
    thumb = camera.locator("img.gth-thumb")
    expect(thumb).to_be_visible(timeout=STEP_MS)
    expect(assistant(photo).last).to_contain_text("photo", timeout=STEP_MS)
    # The finished card says what became of the photo, not what it was waiting for.
    taken = re.compile(r"^Photo taken: \d+\u00d7\d+ JPEG, \d+ KB, sent to the agent\.$")
    expect(camera.locator(".gth-tool-summary")).to_have_text(taken)
    expect(camera).not_to_contain_text("Asking for the camera")
    expect(form.locator(".gth-a2ui-surface")).to_be_visible(timeout=STEP_MS)
    expect(form.locator(".gth-a2ui-surface button.gth-a2ui-button").first).to_be_visible()
    for root in (hello, photo, form):
        expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    # Each cell shows its own turn: one user message each.
    for root, prompt in ((hello, "Hello!"), (photo, "Take a photo"), (form, "sign-up form")):
        # textContent: a cell scrolled out of view is not laid out, so innerText would be empty.
        users = root.locator(".gth-msg-user .gth-msg-content").all_text_contents()
        assert len(users) == 1 and prompt in users[0], users
    # Each turn ends with what it cost (the demo model counts its tokens and costs nothing),
    # the photo turn's two runs in one line; the header says what the conversation cost.
    for root in (hello, photo, form):
        expect(root.locator(".gth-usage")).to_have_text(COST_LINE, timeout=STEP_MS)
    expect(form.locator(".gth-usage-total")).to_have_text(re.compile(r"^Σ [\d,]+ in · "))
    expect(chat).to_have_attribute("data-ready", "true")
    # %gth alone follows the thread as the cells above it run.
    expect(chat.locator(".gth-msg-user")).to_have_count(3, timeout=STEP_MS)
    expect(chat.locator(".gth-usage")).to_have_count(3, timeout=STEP_MS)  # one per turn
    # It is rebuilt from the thread, which holds the photo: the photo is in its card there too.
    whole = chat.locator(".gth-tool[data-tool-name=capture_image]")
    expect(whole.locator("img.gth-thumb")).to_have_count(1, timeout=STEP_MS)
    assert whole.locator("img.gth-thumb").evaluate("i => i.decode().then(() => i.naturalWidth)") > 0
    expect(whole.locator(".gth-tool-summary")).to_have_text(taken)
    notebook.shot("photo", photo)
    notebook.shot("whole thread with the photo", whole)
    # The Session cell printed the demo's answer (it waited for the widgets' turns).
    session_out = notebook.cells.last.locator(".jp-OutputArea-output")
    expect(session_out.first).to_contain_text("model", timeout=STEP_MS)
    # ... as its value, rendered as Markdown (not raw text with asterisks and backticks).
    expect(session_out.first).to_have_attribute("data-mime-type", "text/markdown")
    notebook.shot("quickstart")
    no_errors(notebook)
    run_all_again(notebook, jupyter, str(hello.get_attribute("data-thread-id")))
    expect(notebook.widget(3).locator(".gth-msg-user")).to_have_count(3, timeout=STEP_MS)
    no_errors(notebook)


def test_frontend_tools_run_all(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    folder = copy_shipped(jupyter)
    notebook.open(f"{folder}/frontend-tools.ipynb")
    notebook.run_all(timeout_s=240)
    roots = notebook.page.locator(".gth-root")
    expect(roots).to_have_count(2, timeout=STEP_MS)
    dice, title = roots.nth(0), roots.nth(1)
    for root, tool in ((dice, "roll_dice"), (title, "page_title")):
        card = root.locator(f".gth-tool[data-tool-name={tool}]")
        expect(card).to_have_attribute("data-status", "done", timeout=STEP_MS)
        expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
        expect(assistant(root).last).to_be_visible()
    # A client_tool(...) cell shows one line, not the spec with its JavaScript.
    for index in (3, 7):
        shown = notebook.cells.nth(index).locator(".jp-OutputArea-output").all_text_contents()
        assert len(shown) == 1 and "registered" in shown[0], shown
        assert "=>" not in shown[0] and "\n" not in shown[0].strip(), shown
    notebook.shot("frontend-tools")
    no_errors(notebook)
    run_all_again(notebook, jupyter, str(dice.get_attribute("data-thread-id")))
    no_errors(notebook)
