"""An approved notebook tool call runs as the person approved it, end to end: in a real
JupyterLab 4 and Notebook 7 with the prebuilt extension, at the ``assisted`` approvals mode, a
``%gth`` cell alone (its typed turns carry no turn id of their own) asks, the model calls
``insert_cell`` with ``run: true``, the person edits the code on the approval card and approves,
and the cell inserted and run holds the edited code (the server hands the browser the edited
arguments; the widget runs those, not the model's), marked with the turn.
"""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest
from browser_harness import CHROMIUM, STEP_MS, JupyterServer, NotebookPage
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

ASKED = "agent_answer = 6 * 7\nprint(agent_answer)"
EDITED = "agent_answer = 6 * 9\nprint(agent_answer)"
SCRIPTS: dict[str, list[Any]] = {
    "edited": [
        {
            "content": "",
            "toolCalls": [{"name": "insert_cell", "args": {"source": ASKED, "run": True}}],
        },
        "Inserted.",
    ],
}
EXTRA_CONFIG = {"approvals": "assisted"}


def test_an_edited_approval_inserts_and_runs_the_edited_code(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("edited")
    rel = f"tools-approval-{jupyter.app}.ipynb"
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    new_cell = nbformat.v4.new_code_cell
    cells = [("c-load", "%load_ext gth_jupyter"), ("c-ask", "%gth")]
    nb.cells = [new_cell(source, id=cid) for cid, source in cells]  # type: ignore[no-untyped-call]
    nbformat.write(nb, str(jupyter.root / rel))  # type: ignore[no-untyped-call]
    notebook.open(rel)
    notebook.page.wait_for_function("() => globalThis.__gth_jupyter_notebook__?.version === 1")
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()
    box = root.locator("textarea.gth-input")
    box.fill("put that in a cell")
    box.press("Enter")

    approval = root.locator(".gth-approval")
    expect(approval.locator("button.gth-edit")).to_be_visible(timeout=STEP_MS)
    approval.locator("button.gth-edit").click()
    editor = approval.locator("textarea.gth-approval-input")
    expect(editor).to_have_value(ASKED)
    editor.fill(EDITED)
    approval.locator("button.gth-approval-submit").click()
    expect(approval).to_have_attribute("data-state", "edited")
    card = root.locator(".gth-tool[data-tool-name=insert_cell]")
    expect(card.locator(".gth-notebook-insert")).to_contain_text("ran as [", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.shot("edited insert_cell approved", root)

    # Below the asking cell (index 1), above the empty cell Shift+Enter added at the end.
    expect(notebook.cells).to_have_count(4)
    editor_text = notebook.cells.nth(2).locator(".jp-InputArea-editor .cm-content")
    assert editor_text.inner_text() == EDITED
    expect(notebook.cells.nth(2).locator(".jp-OutputArea-output")).to_have_text("54")
    inserted = notebook.page.evaluate(
        """() => globalThis.__gth_jupyter_notebook__.find({ cellId: "c-ask" })
              .read().cells[2]"""
    )
    turn = inserted["metadata"]["gth"]["turnId"]
    assert isinstance(turn, str) and turn, inserted  # %gth alone: the turn's stand-in id
    records = script.wait_records(2)
    tools = [m for m in records[-1]["messages"] if m.get("type") == "tool"]
    content = tools[-1]["content"]
    result = json.loads(content if isinstance(content, str) else content[0]["text"])
    assert result["stdout"] == "54\n", result
