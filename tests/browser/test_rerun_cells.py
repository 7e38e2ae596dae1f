"""The conversation follows the notebook (issue 18): running a ``%gth`` cell again replaces its
turn, so Run All three times gives each cell's model call exactly the turns of the cells above
it, ``%gth`` alone shows three turns, not nine, and an edited cell run alone leaves the turns
after it behind ("from an earlier run") until they run again; after a reload and after a kernel
restart the same holds. JupyterLab 4 and Notebook 7, headless Chromium, the scripted model."""

from __future__ import annotations

import re
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
    pytest.mark.timeout(300),
]

PROMPTS = ["one?", "two?", "three?"]
SCRIPTS: dict[str, list[Any]] = {"branches": [f"Answer {i}." for i in range(1, 16)]}
EARLIER = "From an earlier run"
REPLACED = "Replaced this cell's earlier turn"


def asked(record: dict[str, Any]) -> list[str]:
    """The person's messages the model was sent in one call."""
    return [str(m["content"]) for m in human_messages(record)]


def users(root: Any) -> list[str]:
    return [text for role, text in transcript(root) if role == "user"]


def settled(notebook: NotebookPage, cells: int) -> None:
    """Until each of the first ``cells`` prompt widgets has its answer and is idle."""
    for index in range(cells):
        root = notebook.ready_widget(index)
        expect(root.locator(".gth-msg-assistant")).to_have_count(1, timeout=STEP_MS)
        expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)


def edit_and_run(notebook: NotebookPage, index: int, source: str) -> None:
    editor = notebook.cells.nth(index).locator(".jp-InputArea-editor")
    editor.click()
    notebook.page.keyboard.press("Control+A")
    notebook.page.keyboard.type(source)
    notebook.run_cell(index)


def restart_kernel(notebook: NotebookPage) -> None:
    page = notebook.page
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel")).first.click()
    page.locator(".jp-Dialog-button.jp-mod-accept").click()
    notebook.wait_kernel(notebook.rel_path)


def test_run_all_three_times_gives_the_model_the_same_context_and_an_edit_replaces_a_turn(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("branches")
    rel = f"branches-{jupyter.app}.ipynb"
    cells = ["%load_ext gth_jupyter", *(f"%gth {p}" for p in PROMPTS), "%gth"]
    write_notebook(jupyter.root / rel, cells)
    notebook.open(rel)
    above = [PROMPTS[:1], PROMPTS[:2], PROMPTS[:3]]
    for round_ in range(1, 4):
        notebook.run_all()
        records = script.wait_records(3 * round_)
        assert len(records) == 3 * round_, f"Run All {round_}: {len(records)} model calls"
        settled(notebook, 3)
        # Each cell's call carries exactly the turns of the cells above it, as the first time.
        assert [asked(r) for r in records[-3:]] == above, f"Run All {round_}"
        if round_ > 1:
            expect(notebook.widget(0).get_by_text(REPLACED)).to_be_visible()
    notebook.mark("ran all three times")
    chat = notebook.widget(3)
    expect(chat.locator(".gth-msg-user")).to_have_count(3, timeout=STEP_MS)
    assert users(chat) == PROMPTS  # three turns, not nine
    assert len(jupyter.thread(str(chat.get_attribute("data-thread-id")))["branches"]) == 3
    notebook.shot("after-three-run-alls")

    # The second cell edited and run alone: the model sees the first turn and the new prompt;
    # the third cell's turn is left behind, and says so once its widget is drawn again.
    edit_and_run(notebook, 2, "%gth two, edited?")
    records = script.wait_records(10)
    assert asked(records[-1]) == ["one?", "two, edited?"]
    expect(notebook.widget(1).locator(".gth-msg-assistant")).to_have_count(1, timeout=STEP_MS)
    thread_id = str(notebook.widget(1).get_attribute("data-thread-id"))
    view = jupyter.thread(thread_id)
    assert [m["content"] for m in view["messages"] if m["role"] == "user"] == [
        "one?",
        "two, edited?",
    ]
    notebook.save()
    notebook.page.reload()
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    third = notebook.ready_widget(2)
    expect(third.get_by_text(EARLIER)).to_be_visible(timeout=STEP_MS)
    assert users(third) == ["three?"]
    expect(notebook.ready_widget(0).get_by_text(EARLIER)).to_have_count(0)
    notebook.shot("after-reload")

    # After a kernel restart, the third cell run again continues from the edited branch.
    notebook.wait_kernel(rel)
    restart_kernel(notebook)
    notebook.run_cells(0, 3)
    records = script.wait_records(11)
    assert asked(records[-1]) == ["one?", "two, edited?", "three?"]
    # The restart ended the other widgets (their cells show their saved copies): the third
    # cell's is the page's only live one.
    third = notebook.cells.nth(3).locator(".gth-root")
    expect(third).to_have_attribute("data-ready", "true", timeout=STEP_MS)
    expect(third.locator(".gth-msg-assistant")).to_have_count(1, timeout=STEP_MS)
    expect(third.get_by_text(EARLIER)).to_have_count(0)
    assert len(script.records()) == 11  # the reload and the restart sent nothing again
