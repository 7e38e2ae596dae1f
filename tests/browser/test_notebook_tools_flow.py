"""The notebook tools' flows as a person meets them, end to end in a real JupyterLab 4 and
Notebook 7 with the prebuilt extension:

- approvals: at ``manual`` an ``insert_cell`` (even one that does not run) asks in its card;
  Approve inserts the cell, Reject leaves the notebook as it was and the model hears so; at
  ``assisted`` a markdown cell goes in unasked, a code cell asks as code before anything is
  inserted, whether it runs now or at the next Run All, and an edit of the person's code cell
  asks with its diff; a ``%gth`` cell is never rewritten (scripted model);
- inserted cells carry ``metadata.gth.turnId`` (the turn that wrote them) and stay in the saved
  file;
- **Ask gth** on a real traceback inserts and runs ``%gth --explain`` below the failing cell, and
  the offline demo, which sees the failing cell only through ``read_notebook`` (a notebook front
  end sends no error with the prompt), explains its ``KeyError``.

The tools' contracts and their cards have tests of their own (test_notebook_tools_widget.py, the
bridge in test_notebook_bridge.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    ServerSpec,
)
from playwright.sync_api import Locator, expect

from gth_jupyter.config._jsonc import loads
from gth_jupyter.copy.provenance import written_cells

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

SHIPPED = Path(__file__).resolve().parents[2] / "notebooks"
DEMO_CONFIG = loads((SHIPPED / ".gsloth.config.json").read_text())

KEPT = "agent_kept = 1"
REFUSED = "agent_refused = 2"
WRITTEN = "agent_written = 3"
RAN = "print(6 * 7)"


def insert(source: str, **args: Any) -> dict[str, Any]:
    return {
        "content": "",
        "toolCalls": [{"name": "insert_cell", "args": {"source": source, **args}}],
    }


MANUAL: dict[str, list[Any]] = {
    "manual": [insert(KEPT), "Inserted.", insert(REFUSED), "Not inserted."],
}
NOTE = "## What the agent found"
PLANTED = "import pathlib\npathlib.Path('planted').touch()"


def edit(cell_id: str, source: str, **args: Any) -> dict[str, Any]:
    call = {"name": "edit_cell", "args": {"cell_id": cell_id, "source": source, **args}}
    return {"content": "", "toolCalls": [call]}


ASSISTED: dict[str, list[Any]] = {
    "assisted": [
        insert(NOTE, cell_type="markdown"),
        insert(WRITTEN),
        insert(RAN, run=True),
        "All are in.",
    ],
    # The review's attack: rewrite the person's code cell, then the asking %gth cell.
    "planted": [
        edit("c-code", PLANTED),
        edit("c-ask", f"{PLANTED}  # %gth go"),
        edit("c-ask", f"{PLANTED}  # %gth go", cell_type="markdown"),
        "Nothing changed.",
    ],
}
# Which server each test runs on.
SERVER_OF = {
    "test_manual_asks_before_any_insert_and_a_rejection_changes_nothing": "manual",
    "test_assisted_asks_for_code_cells_and_the_cells_are_saved_marked": "assisted",
    "test_assisted_asks_before_rewriting_code_and_never_rewrites_a_gth_cell": "assisted",
    "test_ask_gth_on_a_traceback_explains_it_from_the_notebook": "demo",
}


# Three servers per app (the ``servers`` fixture), each started by the first test that needs
# it: the scripted model at ``manual`` and at ``assisted``, and the shipped demo configuration
# (``assisted``, the default).
SERVERS = {
    "manual": ServerSpec(MANUAL, extra={"approvals": "manual"}),
    "assisted": ServerSpec(ASSISTED, extra={"approvals": "assisted"}),
    "demo": ServerSpec(config=DEMO_CONFIG),
}


@pytest.fixture
def jupyter(request: pytest.FixtureRequest, servers: dict[str, JupyterServer]) -> JupyterServer:
    """This test's server (the ``notebook`` fixture opens its page on it)."""
    return servers[SERVER_OF[request.function.__name__]]


def notebook_file(path: Path, cells: list[tuple[str, str]]) -> None:
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["kernelspec"] = kernel
    new_cell = nbformat.v4.new_code_cell
    nb.cells = [new_cell(source, id=cid) for cid, source in cells]  # type: ignore[no-untyped-call]
    nbformat.write(nb, str(path))  # type: ignore[no-untyped-call]


def open_notebook(nb: NotebookPage, rel: str, cells: list[tuple[str, str]]) -> None:
    notebook_file(nb.server.root / rel, cells)
    nb.open(rel)
    nb.page.wait_for_function("() => globalThis.__gth_jupyter_notebook__?.version === 1")


def sources(nb: NotebookPage, asking: str) -> list[str]:
    """The notebook's cells as the notebook model holds them now (through the bridge)."""
    read = nb.page.evaluate(
        "id => globalThis.__gth_jupyter_notebook__.find({ cellId: id }).read()", asking
    )
    return [str(c["source"]) for c in read["cells"]]


def tool_results(records: list[dict[str, Any]]) -> list[str]:
    """Every tool result the model was given in its last call, as text."""
    found = []
    for message in records[-1]["messages"]:
        if message.get("type") == "tool":
            content = message["content"]
            found.append(content if isinstance(content, str) else json.dumps(content))
    return found


def assistant(root: Locator) -> Locator:
    return root.locator(".gth-msg-assistant .gth-msg-content")


def test_manual_asks_before_any_insert_and_a_rejection_changes_nothing(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("manual")
    rel = f"flow-manual-{jupyter.app}.ipynb"
    open_notebook(notebook, rel, [("c-load", "%load_ext gth_jupyter"), ("c-ask", "%gth go")])
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()
    before = sources(notebook, "c-ask")  # Shift+Enter on the last cell added an empty one

    # An insert that does not run is a write: at manual its card asks, and nothing is in yet.
    card = root.locator(".gth-tool[data-tool-name=insert_cell]")
    approval = card.locator(".gth-approval")
    expect(approval).to_be_visible(timeout=STEP_MS)
    expect(approval.locator(".gth-approval-title")).to_have_text("Put this code in your notebook?")
    expect(approval).to_contain_text('approvals are set to "manual"')
    expect(card.locator("pre.gth-run-code")).to_have_text(KEPT)
    assert sources(notebook, "c-ask") == before
    notebook.shot("manual asks", root)
    approval.locator("button.gth-approve").click()
    expect(approval).to_have_attribute("data-state", "approved")
    expect(assistant(root).last).to_have_text("Inserted.", timeout=STEP_MS)
    # Right below the asking cell, not run.
    assert sources(notebook, "c-ask") == [before[0], before[1], KEPT, *before[2:]]
    expect(notebook.cells.nth(2).locator(".jp-InputPrompt")).to_have_text(re.compile(r"^\[ ?\]:?$"))

    # The next insert is rejected: the notebook stays as it is and the model is told. (Sent
    # once the first run has ended: Enter during a run sends nothing.)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    after = sources(notebook, "c-ask")
    box = root.locator("textarea.gth-input")
    box.fill("one more")
    box.press("Enter")
    second = root.locator(".gth-tool[data-tool-name=insert_cell]").nth(1)
    rejecting = second.locator(".gth-approval")
    expect(rejecting).to_be_visible(timeout=STEP_MS)
    expect(second.locator("pre.gth-run-code")).to_have_text(REFUSED)
    rejecting.locator("button.gth-reject").click()
    expect(rejecting).to_have_attribute("data-state", "rejected")
    expect(assistant(root).last).to_have_text("Not inserted.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    assert sources(notebook, "c-ask") == after
    expect(notebook.cells).to_have_count(len(after))
    records = script.wait_records(4)
    assert len(records) == 4, records
    (refusal,) = tool_results(records)[-1:]
    assert "rejected" in refusal, refusal
    assert REFUSED not in json.dumps(sources(notebook, "c-ask"))


def test_assisted_asks_for_code_cells_and_the_cells_are_saved_marked(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("assisted")
    rel = f"flow-assisted-{jupyter.app}.ipynb"
    open_notebook(notebook, rel, [("c-load", "%load_ext gth_jupyter"), ("c-ask", "%gth go")])
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()
    cards = root.locator(".gth-tool[data-tool-name=insert_cell]")

    # A markdown cell is a write: assisted inserts it unasked.
    note = cards.nth(0)
    expect(note.locator(".gth-notebook-insert")).to_contain_text("Inserted cell 2", timeout=STEP_MS)
    expect(note.locator(".gth-approval")).to_have_count(0)
    # A code cell runs at the next Run All even when the call does not run it: code, asked,
    # and not in the notebook until approved.
    written = cards.nth(1)
    planting = written.locator(".gth-approval")
    expect(planting).to_be_visible(timeout=STEP_MS)
    expect(planting.locator(".gth-approval-title")).to_have_text("Put this code in your notebook?")
    expect(written.locator(".gth-run-justification").first).to_have_text(
        re.compile(r"^New code cell below cell 2 \(markdown\)")
    )
    assert WRITTEN not in sources(notebook, "c-ask")
    planting.locator("button.gth-approve").click()
    expect(written.locator(".gth-notebook-insert")).to_contain_text(
        "Inserted cell 3", timeout=STEP_MS
    )
    # With run: true, code run now: its card asks as run_python's does.
    ran = cards.nth(2)
    approval = ran.locator(".gth-approval")
    expect(approval).to_be_visible(timeout=STEP_MS)
    expect(approval.locator(".gth-approval-title")).to_have_text("Run this code in your kernel?")
    expect(ran.locator("pre.gth-run-code")).to_have_text(RAN)
    assert RAN not in sources(notebook, "c-ask")
    notebook.shot("assisted asks for run", root)
    approval.locator("button.gth-approve").click()
    expect(ran.locator(".gth-notebook-insert")).to_contain_text("ran as [", timeout=STEP_MS)
    expect(assistant(root).last).to_have_text("All are in.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    # In order below the asking cell; the one that ran shows its output in the notebook.
    assert sources(notebook, "c-ask")[:5] == [
        "%load_ext gth_jupyter",
        "%gth go",
        NOTE,
        WRITTEN,
        RAN,
    ]
    expect(notebook.cells.nth(4).locator(".jp-OutputArea-output")).to_have_text("42")
    assert len(script.wait_records(4)) == 4
    # The turn ends with its Changes card: a line per cell; opening one shows its diff (here the
    # inserted source) and makes its cell the notebook's active one.
    changes = root.locator(".gth-changes .gth-change > summary")
    expect(changes).to_have_text(
        [
            "+ cell 2 (markdown)",
            "+ cell 3 (code)",
            re.compile(r"^\+ cell 4 \(code, ran as \[\d+\]\)$"),
        ]
    )
    changes.nth(1).click()
    expect(root.locator(".gth-change-inserted pre").nth(1)).to_have_text(WRITTEN)
    expect(notebook.cells.nth(3)).to_have_class(re.compile(r"\bjp-mod-active\b"))

    # Saved, the inserted cells stay, marked with the turn that wrote them; the person's not.
    # None is marked trusted: what the agent wrote is not the person's.
    thread = jupyter.thread(str(root.get_attribute("data-thread-id")))
    (turn,) = [t["turnId"] for t in thread["turns"]]
    notebook.save()  # the file held no output before: saved once it holds the chat's
    saved = nbformat.read(str(jupyter.root / rel), as_version=4)  # type: ignore[no-untyped-call]
    cells = [(c.source, (c.metadata.get("gth") or {}).get("turnId")) for c in saved.cells]
    assert cells[:5] == [
        ("%load_ext gth_jupyter", None),
        ("%gth go", None),
        (NOTE, turn),
        (WRITTEN, turn),
        (RAN, turn),
    ], cells
    # Each says who wrote it: the thread, the call, the tool, the model, unchanged since.
    thread_id = str(root.get_attribute("data-thread-id"))
    written = written_cells(saved)
    assert [(w.index, w.change, w.tool, w.threadId, w.editedSince) for w in written] == [
        (i, "inserted", "insert_cell", thread_id, False) for i in (2, 3, 4)
    ]
    assert len({w.toolCallId for w in written}) == 3 and all(w.at for w in written)
    model = jupyter.api("GET", "gth/info")["model"]
    assert model and all(w.model == model for w in written), (model, written)
    assert not any("trusted" in c.metadata for c in saved.cells[2:5]), saved.cells[2:5]
    assert saved.cells[4].outputs[0]["text"] == "42\n", saved.cells[4].outputs


def test_assisted_asks_before_rewriting_code_and_never_rewrites_a_gth_cell(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """The review's attack at ``assisted``: ``edit_cell`` rewrote the person's code cell and the
    asking ``%gth`` cell unasked, and the next Run All ran both."""
    script = jupyter.use_script("planted")
    rel = f"flow-planted-{jupyter.app}.ipynb"
    cells = [("c-load", "%load_ext gth_jupyter"), ("c-code", "total = 1"), ("c-ask", "%gth go")]
    open_notebook(notebook, rel, cells)
    notebook.run_cells(0, 2)
    root = notebook.ready_widget()
    before = sources(notebook, "c-ask")
    edits = root.locator(".gth-tool[data-tool-name=edit_cell]")

    # The person's code cell: asked as code, over the change as a diff of the cell as it is.
    first = edits.nth(0)
    asking = first.locator(".gth-approval")
    expect(asking).to_be_visible(timeout=STEP_MS)
    expect(asking.locator(".gth-approval-title")).to_have_text("Change this code cell?")
    expect(first.locator(".gth-run-justification").first).to_have_text(
        "Edit cell 1 (code) · total = 1: +2 \N{MINUS SIGN}1 lines"
    )
    lines = first.locator(".gth-run-args .gth-diff-line")
    expect(lines).to_have_text(
        ["- total = 1", "+ import pathlib", "+ pathlib.Path('planted').touch()"]
    )
    notebook.shot("a code edit asks with its diff", root)
    asking.locator("button.gth-reject").click()
    expect(asking).to_have_attribute("data-state", "rejected")

    # The asking %gth cell: asked too (its default kind is code); approved, the page still
    # refuses to rewrite a %gth cell below bypass.
    second = edits.nth(1)
    magic = second.locator(".gth-approval")
    expect(magic).to_be_visible(timeout=STEP_MS)
    magic.locator("button.gth-approve").click()
    expect(second.locator(".gth-tool-error")).to_contain_text("is a %gth cell", timeout=STEP_MS)
    # Called markdown (a write, unasked), the page holds the call to it: not a markdown cell.
    third = edits.nth(2)
    expect(third.locator(".gth-tool-error")).to_contain_text("not markdown", timeout=STEP_MS)
    expect(third.locator(".gth-approval")).to_have_count(0)

    expect(assistant(root).last).to_have_text("Nothing changed.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    assert sources(notebook, "c-ask") == before
    results = tool_results(script.wait_records(4)[-1:])
    assert "rejected the edit_cell call" in results[0], results
    assert "is a %gth cell" in results[1] and "not markdown" in results[2], results


FAILING = 'prices["Apple"] * 2'


def test_ask_gth_on_a_traceback_explains_it_from_the_notebook(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    rel = f"flow-ask-{jupyter.app}.ipynb"
    cells = [
        ("c-load", "%load_ext gth_jupyter"),
        ("c-data", 'prices = {"apple": 1.5, "pear": 2.0}'),
        ("c-fail", FAILING),
    ]
    open_notebook(notebook, rel, cells)
    notebook.run_cells(0, 1, 2)
    failing = notebook.cells.nth(2)
    expect(failing.locator(".jp-OutputArea-output")).to_contain_text("KeyError: 'Apple'")
    button = failing.locator(".gth-ask-button")
    expect(button).to_have_text("Ask gth", timeout=STEP_MS)
    button.click()

    # Inserted right below the failing cell, and run.
    explain = notebook.cells.nth(3)
    expect(explain.locator(".jp-InputArea-editor .cm-content")).to_have_text("%gth --explain")
    expect(explain.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=STEP_MS)
    root = explain.locator(".gth-root")
    expect(root).to_have_attribute("data-ready", "true", timeout=60_000)
    # The prompt carries no error (a notebook front end is there): only the question.
    expect(root.locator(".gth-msg-user .gth-msg-content")).to_have_text(
        "Why did the cell above fail?", timeout=STEP_MS
    )
    # The agent read the notebook, unasked, and saw the failing cell and its traceback.
    read = root.locator(".gth-tool[data-tool-name=read_notebook]")
    expect(read.locator(".gth-nb-cell[data-error=true]")).to_contain_text(
        "KeyError", timeout=STEP_MS
    )
    expect(read.locator(".gth-approval")).to_have_count(0)
    answer = assistant(root).last
    # From the traceback: the error; from the cell's source: where the key is looked up; from
    # the notebook: the spelling it holds.
    expect(answer).to_contain_text("(c-fail) failed with KeyError: 'Apple'", timeout=STEP_MS)
    expect(answer).to_contain_text("looks up the key 'Apple' in prices")
    expect(answer).to_contain_text("use prices['apple']")
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.shot("ask gth explains", root)
