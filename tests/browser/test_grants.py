"""Standing approvals in a real JupyterLab 4 and Notebook 7, headless Chromium: "Always allow in
this thread" on the approval card, then the same shell command a second time runs without a
card, and the server lists the grant for the thread."""

from __future__ import annotations

from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    write_notebook,
)
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(150),
]

COMMAND = "echo granted"
SHELL = {"name": "run_shell_command", "args": {"command": COMMAND}}
SCRIPTS: dict[str, list[Any]] = {
    "grants": [
        {"content": "Running it.", "toolCalls": [SHELL]},
        "First run done.",
        {"content": "Running it again.", "toolCalls": [SHELL]},
        "Second run done, unasked.",
    ],
}


# The shell tool, asking before every command (see the browser conftest's ``jupyter``).
EXTRA_CONFIG = {"builtInTools": ["run_shell_command"], "approvals": "manual"}


def test_always_allow_then_the_second_call_runs_without_asking(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    jupyter.use_script("grants")
    rel = f"grants-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth run it", ""])
    notebook.open(rel)
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()

    approval = root.locator(".gth-approval")
    expect(approval.locator("pre.gth-approval-command")).to_have_text(COMMAND, timeout=STEP_MS)
    notebook.shot("approval")
    approval.locator("button.gth-approve-thread").click()
    expect(approval).to_have_attribute("data-state", "thread")
    answers = root.locator(".gth-msg-assistant .gth-msg-content")
    expect(answers.last).to_have_text("First run done.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)

    box = root.locator("textarea.gth-input")
    box.fill("run it again")
    box.press("Enter")
    expect(answers.last).to_have_text("Second run done, unasked.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    expect(root.locator(".gth-approval")).to_have_count(1)  # no second card
    expect(root.locator(".gth-tool[data-tool-name=run_shell_command]")).to_have_count(2)
    notebook.shot("second run")

    thread_id = str(root.get_attribute("data-thread-id"))
    grants = jupyter.api("GET", f"gth/threads/{thread_id}/grants")["grants"]
    assert [(g["scope"], g["kind"], g["label"]) for g in grants] == [("thread", "shell", COMMAND)]

    # The widget lists the grant above the input; Revoke there removes it on the server.
    listed = root.locator(".gth-grants .gth-grant")
    expect(listed).to_have_count(1, timeout=STEP_MS)
    expect(listed.locator(".gth-grant-label")).to_have_text(COMMAND)
    root.locator(".gth-grants summary").click()
    listed.locator("button.gth-grant-revoke").click()
    expect(listed).to_have_count(0, timeout=STEP_MS)
    assert jupyter.api("GET", f"gth/threads/{thread_id}/grants")["grants"] == []
