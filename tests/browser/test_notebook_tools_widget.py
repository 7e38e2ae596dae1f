"""The notebook tools from the widget's side, end to end: the chat widget in a real JupyterLab 4
and Notebook 7 finds its notebook through the prebuilt extension's bridge and fulfils
``read_notebook``, ``insert_cell`` and ``edit_cell`` there; its ``run_python`` cards get an
**Insert as cell** button. The scripted model makes the calls; approvals are off (``bypass``),
the gate has tests of its own.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
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

FAILING = 'data = {"a": 1}\ndata["revenue"]'
FIXED = 'data = {"revenue": 1}\ndata["revenue"]'
INSERTED = "agent_answer = 6 * 7\nprint(agent_answer)"
PLOT = "\n".join(
    [
        "import matplotlib.pyplot as plt",
        "agent_fig, agent_ax = plt.subplots(figsize=(3, 2))",
        "agent_ax.plot([1, 2, 3], [2, 1, 3])",
        "plt.show()",
    ]
)


def calls(name: str, args: dict[str, Any], answer: str) -> list[Any]:
    """The model calls one tool, then answers."""
    return [{"content": "", "toolCalls": [{"name": name, "args": args}]}, answer]


SCRIPTS: dict[str, list[Any]] = {
    "read": calls("read_notebook", {}, "Read."),
    "insert": calls("insert_cell", {"source": INSERTED, "run": True}, "Inserted."),
    "edit": calls("edit_cell", {"cell_id": "c-fail", "source": FIXED}, "Edited."),
    "button": calls("run_python", {"code": "agent_z = 1"}, "Ran."),
    "plot": calls("insert_cell", {"source": PLOT, "run": True}, "A line that dips and rises."),
}
EXTRA_CONFIG = {"builtInTools": ["run_python"], "approvals": "bypass"}


def notebook_file(path: Path, prompt: str) -> None:
    """Three cells with known ids: the extension, a cell that fails, and the %gth cell asking."""
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["kernelspec"] = kernel
    cells = [("c-load", "%load_ext gth_jupyter"), ("c-fail", FAILING), ("c-ask", f"%gth {prompt}")]
    new_cell = nbformat.v4.new_code_cell
    nb.cells = [new_cell(source, id=cid) for cid, source in cells]  # type: ignore[no-untyped-call]
    nbformat.write(nb, str(path))  # type: ignore[no-untyped-call]


def tool_result(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The notebook tool's result as the model read it (the tool message of the last call)."""
    tools = [m for m in records[-1]["messages"] if m.get("type") == "tool"]
    assert tools, records[-1]["messages"]
    content = tools[-1]["content"]
    return dict(json.loads(content if isinstance(content, str) else content[0]["text"]))


def source_of(nb: NotebookPage, index: int) -> str:
    return str(nb.cells.nth(index).locator(".jp-InputArea-editor .cm-content").inner_text())


def open_and_ask(jupyter: JupyterServer, nb: NotebookPage, key: str) -> Any:
    rel = f"tools-{key}-{jupyter.app}.ipynb"
    notebook_file(jupyter.root / rel, f"{key} please")
    script = jupyter.use_script(key)
    nb.open(rel)
    nb.page.wait_for_function("() => globalThis.__gth_jupyter_notebook__?.version === 1")
    return script, rel


def test_read_notebook_sees_an_unsaved_edit_and_the_traceback(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script, _ = open_and_ask(jupyter, notebook, "read")
    notebook.run_cells(0, 1)
    # An edit nobody saved: the model reads the notebook as it is on screen.
    notebook.cells.nth(1).locator(".jp-InputArea-editor").click()
    notebook.page.keyboard.press("Control+End")
    notebook.page.keyboard.type("  # edited by hand")
    notebook.run_cell(2)
    root = notebook.ready_widget()
    expect(root.locator(".gth-notebook-off")).to_have_count(0)
    card = root.locator(".gth-tool[data-tool-name=read_notebook]")
    # Four cells: Shift+Enter on the last cell added an empty one below it.
    expect(card.locator(".gth-notebook-read")).to_contain_text("Read 4 of 4 cells", timeout=STEP_MS)
    expect(card.locator(".gth-nb-cell[data-error=true]")).to_contain_text("KeyError")
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.shot("read_notebook card", root)
    # What the model saw (issue 19): the turn's Context lists read_notebook's result, with its
    # tokens and its share of the call, as the model got it.
    context = root.locator(".gth-context")
    context.locator("summary").first.click()
    expect(context.locator(".gth-context-call")).to_have_count(2, timeout=STEP_MS)
    item = (
        context.locator(".gth-context-call")
        .nth(1)
        .locator(".gth-context-item", has_text="read_notebook result")
    )
    expect(item.locator("summary")).to_have_text(
        re.compile(r"^tool · read_notebook result · [\d,]+ tokens")
    )
    assert "edited by hand" in str(item.locator(".gth-context-text").text_content())
    largest = context.locator(".gth-context-call").nth(1).locator(".gth-context-largest li")
    expect(largest.first).to_have_text(
        re.compile(r"^read_notebook result: [\d,]+ tokens · \d+% of this call$")
    )
    notebook.shot("the Context view", root)
    read = tool_result(script.wait_records(2))
    cells = {c["id"]: c for c in read["cells"]}
    assert cells["c-fail"]["source"].endswith("# edited by hand"), cells["c-fail"]
    error = next(o for o in cells["c-fail"]["outputs"] if o["type"] == "error")
    assert error["ename"] == "KeyError" and "'revenue'" in error["evalue"], error
    assert "KeyError" in error["traceback"] and "\x1b" not in error["traceback"], error
    assert read["asking_cell"] == {"id": "c-ask", "index": 2}, read
    assert cells["c-ask"]["asking"] is True


def test_insert_cell_runs_a_real_cell_below_the_asking_cell(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script, _ = open_and_ask(jupyter, notebook, "insert")
    notebook.run_cells(0, 2)
    root = notebook.ready_widget()
    card = root.locator(".gth-tool[data-tool-name=insert_cell]")
    expect(card.locator(".gth-notebook-insert")).to_contain_text("ran as [", timeout=STEP_MS)
    expect(card.locator(".gth-run-stdout")).to_have_text("42")
    # Below the asking cell, above the empty cell Shift+Enter added at the end.
    expect(notebook.cells).to_have_count(5)
    assert source_of(notebook, 3) == INSERTED
    expect(notebook.cells.nth(3).locator(".jp-OutputArea-output")).to_have_text("42")
    expect(notebook.cells.nth(3).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"))
    result = tool_result(script.wait_records(2))
    assert result["index"] == 3 and result["status"] == "ok", result
    assert result["stdout"] == "42\n", result
    assert isinstance(result["cell_id"], str) and result["cell_id"], result


def test_edit_cell_changes_the_cell_and_shows_the_diff(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script, _ = open_and_ask(jupyter, notebook, "edit")
    notebook.run_cells(0, 2)
    root = notebook.ready_widget()
    card = root.locator(".gth-tool[data-tool-name=edit_cell]")
    # The diff as made, in the result; the one asked over (under the arguments) folded away.
    made = card.locator(".gth-notebook-edit")
    expect(made.locator(".gth-diff-del")).to_have_text('- data = {"a": 1}\n', timeout=STEP_MS)
    expect(made.locator(".gth-diff-add")).to_have_text('+ data = {"revenue": 1}\n')
    expect(card.locator("details.gth-tool-args")).not_to_have_attribute("open", "")
    assert source_of(notebook, 1) == FIXED
    notebook.shot("edit_cell diff", root)
    result = tool_result(script.wait_records(2))
    # What the model got: the diff, not the cell's old source (which the page sent as undo).
    assert result == {
        "cell_id": "c-fail",
        "index": 1,
        "added": 1,
        "removed": 1,
        "diff": ['- data = {"a": 1}', '+ data = {"revenue": 1}', '  data["revenue"]'],
    }, result
    # The thread keeps that old source with the call, for the Changes card's Undo.
    thread = jupyter.thread(str(root.get_attribute("data-thread-id")))
    (kept,) = [m for m in thread["messages"] if m["role"] == "tool"]
    assert kept["undo"] == {"before": FAILING}, kept
    expect(root.locator(".gth-changes .gth-change > summary")).to_have_text(
        ["~ cell 1 (code, +1 \N{MINUS SIGN}1)"]
    )


def test_insert_as_cell_puts_run_python_code_below_the_asking_cell(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    open_and_ask(jupyter, notebook, "button")
    notebook.run_cells(0, 2)
    root = notebook.ready_widget()
    card = root.locator(".gth-tool[data-tool-name=run_python]")
    expect(card).to_have_attribute("data-status", "done", timeout=STEP_MS)
    card.locator("button.gth-insert-cell").click()
    expect(card.locator(".gth-insert-cell-status")).to_have_text("Inserted below the %gth cell.")
    expect(notebook.cells).to_have_count(5)
    assert source_of(notebook, 3) == "agent_z = 1"
    # Inserted, not run.
    expect(notebook.cells.nth(3).locator(".jp-InputPrompt")).to_have_text(re.compile(r"^\[ ?\]:?$"))


def test_a_plot_from_an_inserted_cell_reaches_the_model_once(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script, _ = open_and_ask(jupyter, notebook, "plot")
    notebook.run_cells(0, 2)
    root = notebook.ready_widget()
    card = root.locator(".gth-tool[data-tool-name=insert_cell]")
    expect(card.locator("img.gth-tool-image")).to_have_count(1, timeout=60_000)
    expect(notebook.cells.nth(3).locator(".jp-OutputArea-output img")).to_have_count(1)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.shot("plot in the insert_cell card", root)
    records = script.wait_records(2)
    images = [
        block
        for message in records[1]["messages"]
        if message.get("type") == "human" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") in ("image", "image_url")
    ]
    assert len(images) == 1, records[1]["messages"]
    found = json.dumps(images[0])
    data = re.search(r"iVBORw0KGgo[A-Za-z0-9+/=]+", found)
    assert data and base64.b64decode(data.group(0))[:8] == b"\x89PNG\r\n\x1a\n", found
    # Once in all the model received: in that block, never in the tool result.
    assert sum(json.dumps(r).count(data.group(0)) for r in records) == 1
    result = tool_result(records)
    assert result["images"] == [{"mimeType": "image/png", "data": None, "omitted": True}], result
