"""The notebook bridge of the prebuilt extension (labextension/), driven as the chat widget drives
it: ``globalThis.__gth_jupyter_notebook__`` on the page. JupyterLab 4 and Notebook 7, headless
Chromium, a real kernel; no model is called."""

from __future__ import annotations

import re
import urllib.error
from collections.abc import Callable
from typing import Any

import nbformat
import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    WIDGET_VIEW,
    JupyterServer,
    NotebookPage,
    write_notebook,
)
from nbformat.sign import NotebookNotary
from playwright.sync_api import expect

from gth_jupyter.copy.provenance import source_hash, written_cells

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

SCRIPTS: dict[str, list[Any]] = {"default": []}
# What the widget hands the bridge with a write (js/src/tools/notebook.js).
PROVENANCE = {
    "threadId": "thread-1",
    "toolCallId": "call-1",
    "tool": "insert_cell",
    "model": "demo",
}

# find() the notebook by a cell id, then call one handle method with the arguments.
CALL = """async ([cellId, method, args]) => {
  const bridge = globalThis.__gth_jupyter_notebook__;
  if (!bridge) throw new Error("no bridge on the page");
  const handle = bridge.find({ cellId });
  if (!handle) return null;
  return method === "path" ? handle.path : await handle[method](args);
}"""


def cell_ids(jupyter: JupyterServer, rel: str) -> list[str]:
    nb = nbformat.read(str(jupyter.root / rel), as_version=4)  # type: ignore[no-untyped-call]
    return [str(c["id"]) for c in nb.cells]


def call(nb: NotebookPage, cell_id: str, method: str, args: Any = None) -> Any:
    return nb.page.evaluate(CALL, [cell_id, method, args])


def open_with_bridge(nb: NotebookPage, rel: str) -> None:
    nb.open(rel)
    nb.page.wait_for_function("() => globalThis.__gth_jupyter_notebook__?.version === 1")


def saved(jupyter: JupyterServer, rel: str) -> dict[str, Any]:
    try:
        return dict(jupyter.api("GET", f"api/contents/{rel}?content=1")["content"])
    except urllib.error.HTTPError:  # read while Jupyter was writing it
        return {"cells": []}


def save_until(
    nb: NotebookPage, rel: str, done: Callable[[dict[str, Any]], bool], timeout_s: float = 30
) -> dict[str, Any]:
    """Saves (the page's own save, awaited) until the file on disk passes ``done``."""
    assert nb.rel_path == rel, (nb.rel_path, rel)
    return nb.save_until(done, timeout_s)


def test_read_sees_an_unsaved_edit(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    rel = f"bridge-read-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["x = 1", "print(x)"])
    ids = cell_ids(jupyter, rel)
    open_with_bridge(notebook, rel)

    editor = notebook.cells.nth(0).locator(".jp-InputArea-editor .cm-content")
    editor.click()
    notebook.page.keyboard.press("Control+a")
    notebook.page.keyboard.type("x = 42")
    expect(editor).to_have_text("x = 42")

    result = call(notebook, ids[1], "read")
    assert result["path"] == rel
    assert result["cellCount"] == 2
    assert [c["id"] for c in result["cells"]] == ids
    assert result["cells"][0]["source"] == "x = 42"  # not saved: the file still says x = 1
    assert saved(jupyter, rel)["cells"][0]["source"] == "x = 1"
    assert result["cells"][1] | {"metadata": {}} == {
        "index": 1,
        "id": ids[1],
        "cell_type": "code",
        "source": "print(x)",
        "execution_count": None,
        "outputs": [],
        "metadata": {},
    }
    paged = call(notebook, ids[0], "read", {"offset": 1, "limit": 5})
    assert [c["index"] for c in paged["cells"]] == [1]
    assert call(notebook, "no-such-cell", "path") is None


def test_insert_cell_runs_below_the_asking_cell_and_is_saved(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    rel = f"bridge-insert-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["a = 2", "%gth is asking here", "'the last cell'"])
    ids = cell_ids(jupyter, rel)
    open_with_bridge(notebook, rel)
    notebook.run_cell(0)

    first = call(
        notebook,
        ids[1],
        "insertCell",
        {
            "source": "print(a * 3)",
            "askingCellId": ids[1],
            "turnId": "turn-1",
            "run": True,
            "provenance": PROVENANCE,
        },
    )
    assert first["index"] == 2
    assert first["status"] == "ok"
    assert isinstance(first["executionCount"], int)
    assert first["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "6\n"}]
    # The turn's next cell goes after its first one, still above the person's next cell.
    second = call(
        notebook,
        ids[1],
        "insertCell",
        {"source": "1 / 0", "turnId": "turn-1", "run": True},
    )
    assert second["index"] == 3
    assert second["status"] == "error"
    assert second["outputs"][0]["ename"] == "ZeroDivisionError"
    note = call(
        notebook,
        ids[1],
        "insertCell",
        {"source": "A *note*", "cellType": "markdown", "after": ids[0]},
    )
    assert note["index"] == 1

    # Real cells in the notebook view, with their outputs.
    expect(notebook.cells).to_have_count(6)
    new_cell = notebook.cells.nth(3)
    expect(new_cell.locator(".jp-OutputArea-output")).to_have_text("6")
    expect(new_cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"))
    # The failing cell's traceback carries the Ask gth button.
    expect(notebook.cells.nth(4).locator(".gth-ask-button")).to_have_count(1, timeout=STEP_MS)

    def has_cells(content: dict[str, Any]) -> bool:
        return len(content["cells"]) == 6

    content = save_until(notebook, rel, has_cells)
    sources = [c["source"] for c in content["cells"]]
    assert sources == [
        "a = 2",
        "A *note*",
        "%gth is asking here",
        "print(a * 3)",
        "1 / 0",
        "'the last cell'",
    ]
    kept = content["cells"][3]
    assert kept["id"] == first["cellId"]
    gth = kept["metadata"]["gth"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", gth.pop("at"))
    # Who wrote it, and the hash of what it wrote, as Python computes it from the file.
    assert gth == {
        "turnId": "turn-1",
        "change": "inserted",
        **PROVENANCE,
        "sourceHash": source_hash("print(a * 3)"),
    }
    # The Markdown note and the two code cells, in notebook order; none changed since.
    assert [(c.index, c.change, c.editedSince) for c in written_cells(content)] == [
        (1, "inserted", False),
        (3, "inserted", False),
        (4, "inserted", False),
    ]
    assert kept["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "6\n"}]
    assert "gth" not in content["cells"][0]["metadata"]


def test_edit_cell_is_undone_by_the_notebooks_undo(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    rel = f"bridge-edit-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["y = 1", "%gth", "w = 0"])
    ids = cell_ids(jupyter, rel)
    open_with_bridge(notebook, rel)

    edited = call(notebook, ids[1], "editCell", {"cellId": ids[0], "source": "y = 2"})
    assert edited == {"cellId": ids[0], "index": 0, "before": "y = 1", "after": "y = 2"}
    # The edit is marked as the agent's, with the hash of what it wrote.
    gth = call(notebook, ids[1], "read")["cells"][0]["metadata"]["gth"]
    assert gth["change"] == "edited" and gth["sourceHash"] == source_hash("y = 2")
    editor = notebook.cells.nth(0).locator(".jp-InputArea-editor .cm-content")
    expect(editor).to_have_text("y = 2")
    # Undo in the cell, as a person does: one Ctrl+Z restores the source.
    editor.click()
    notebook.page.keyboard.press("Control+z")
    expect(editor).to_have_text("y = 1")
    assert call(notebook, ids[1], "read")["cells"][0]["source"] == "y = 1"

    # A cell the turn edited below the asking cell does not pull the turn's inserts below it:
    # they go after what the turn inserted, right under the asking cell.
    call(notebook, ids[1], "editCell", {"cellId": ids[2], "source": "w = 1", "turnId": "t"})
    marks = call(notebook, ids[1], "read")["cells"][2]["metadata"]["gth"]
    assert marks["turnId"] == "t" and marks["change"] == "edited"
    # An inserted cell is one step of the notebook's undo (Z in command mode).
    put = call(notebook, ids[1], "insertCell", {"source": "z = 3", "turnId": "t"})
    assert put["index"] == 2
    expect(notebook.cells).to_have_count(4)
    notebook.cells.nth(0).locator(".jp-InputPrompt").click()
    notebook.page.keyboard.press("Escape")
    notebook.page.keyboard.press("z")
    expect(notebook.cells).to_have_count(3)

    try:
        call(notebook, ids[1], "editCell", {"cellId": "nope", "source": ""})
    except Exception as error:  # Playwright re-raises the page's Error
        assert "No cell with id" in str(error)
    else:
        raise AssertionError("editCell of a missing cell did not throw")


def test_a_dead_widget_view_shows_the_static_copy(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    rel = f"bridge-dead-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%gth what is 2+2?", "'after'"])
    path = jupyter.root / rel
    nb = nbformat.read(str(path), as_version=4)  # type: ignore[no-untyped-call]
    nb.cells[0].outputs = [
        nbformat.v4.new_output(  # type: ignore[no-untyped-call]
            "display_data",
            data={
                WIDGET_VIEW: {"model_id": "0123deadbeef", "version_major": 2, "version_minor": 1},
                "text/html": '<div class="gth-static-copy">Four, saved.</div>',
                "text/markdown": "Four, saved.",
                "text/plain": "Four, saved.",
            },
            metadata={"gth_jupyter": {"display": "disp-1"}},
        )
    ]
    # As JupyterLab saves it (the kernel's language_info: no change on connect, so the notebook
    # opens clean), and trusted, as the person's own notebook is: JupyterLab would then prefer
    # the widget view.
    from ipykernel.ipkernel import IPythonKernel

    nb.metadata["language_info"] = IPythonKernel.language_info
    jupyter.ensure_started()
    spec = jupyter.api("GET", "api/kernelspecs")["kernelspecs"]["python3"]["spec"]
    nb.metadata["kernelspec"] = {
        "display_name": spec["display_name"],
        "language": spec["language"],
        "name": "python3",
    }
    NotebookNotary(data_dir=str(jupyter.home / "data")).sign(nb)  # type: ignore[no-untyped-call]
    nbformat.write(nb, str(path))  # type: ignore[no-untyped-call]
    ids = cell_ids(jupyter, rel)
    open_with_bridge(notebook, rel)

    output = notebook.cells.nth(0).locator(".jp-OutputArea-output")
    expect(output.locator(".gth-static-copy")).to_have_text("Four, saved.", timeout=STEP_MS)
    expect(notebook.page.get_by_text("Error displaying widget")).to_have_count(0)
    if jupyter.app == "lab":  # the notebook did not become dirty by it
        expect(notebook.page.locator(".lm-TabBar-tab.jp-mod-current")).not_to_have_class(
            re.compile("jp-mod-dirty")
        )

    # A turn that ends later reaches the output through setStaticCopy.
    data = {"text/html": '<div class="gth-static-copy">Four, updated.</div>', "text/plain": "4"}
    assert call(notebook, ids[1], "setStaticCopy", {"displayId": "disp-1", "data": data}) is True
    expect(output.locator(".gth-static-copy")).to_have_text("Four, updated.")
    assert call(notebook, ids[1], "setStaticCopy", {"displayId": "other", "data": data}) is False
    json_out = call(notebook, ids[1], "read")["cells"][0]["outputs"][0]
    assert json_out["data"]["text/markdown"] == "Four, saved."  # not sent: kept
    assert json_out["metadata"] == {"gth_jupyter": {"display": "disp-1"}}

    # The same copy again (a reloaded page asking once more) writes nothing: the output is not
    # drawn again and the saved notebook stays clean.
    save_until(notebook, rel, lambda content: "Four, updated." in str(content["cells"]))
    drawn = output.locator(".gth-static-copy")
    drawn.evaluate("e => { e.dataset.before = 'yes'; }")
    assert call(notebook, ids[1], "setStaticCopy", {"displayId": "disp-1", "data": data}) is True
    notebook.page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )
    expect(drawn).to_have_attribute("data-before", "yes")
    if jupyter.app == "lab":
        expect(notebook.page.locator(".lm-TabBar-tab.jp-mod-current")).not_to_have_class(
            re.compile("jp-mod-dirty")
        )


def test_ask_gth_on_an_error_inserts_and_runs_explain(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    rel = f"bridge-ask-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["1 / 0", "import sys; print('warning', file=sys.stderr)"])
    open_with_bridge(notebook, rel)
    notebook.run_cells(1, 0)
    failing = notebook.cells.nth(0)
    button = failing.locator(".gth-ask-button")
    expect(button).to_have_text("Ask gth", timeout=STEP_MS)
    # A stderr stream is no error: no button there.
    expect(notebook.cells.nth(1).locator(".jp-OutputArea-output")).to_contain_text("warning")
    expect(notebook.cells.nth(1).locator(".gth-ask-button")).to_have_count(0)

    count = notebook.cells.count()  # Shift+Enter on the last cell added one
    button.click()
    expect(notebook.cells).to_have_count(count + 1)
    explain = notebook.cells.nth(1)  # right below the failing cell
    expect(explain.locator(".jp-InputArea-editor .cm-content")).to_have_text("%gth --explain")
    expect(explain.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"), timeout=STEP_MS)


def test_ask_gth_can_be_turned_off(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    settings = jupyter.home / "settings" / "gth-jupyter-notebook" / "plugin.jupyterlab-settings"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"askGthOnErrors": false}')
    try:
        rel = f"bridge-ask-off-{jupyter.app}.ipynb"
        write_notebook(jupyter.root / rel, ["1 / 0"])
        open_with_bridge(notebook, rel)
        expect(notebook.page.locator(".jp-Notebook[data-gth-ask-gth=off]")).to_have_count(1)
        notebook.run_cell(0)
        output = notebook.cells.nth(0).locator(".jp-OutputArea-output")
        expect(output).to_contain_text("ZeroDivisionError")
        # Two frames: the scan that would add a button has run.
        notebook.page.evaluate(
            "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
        )
        expect(output.locator(".gth-ask-button")).to_have_count(0)
    finally:
        settings.unlink()


LIVE_WIDGET = """\
import ipywidgets
from IPython.display import display
button = ipywidgets.Button(description="live widget")
view = {"model_id": button.model_id, "version_major": 2, "version_minor": 1}
display(
    {"application/vnd.jupyter.widget-view+json": view, "text/plain": "the static copy"},
    raw=True,
    metadata={"gth_jupyter": {"display": "live-1"}},
)"""


def test_a_live_widget_stays_until_its_kernel_restarts(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    rel = f"bridge-live-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, [LIVE_WIDGET])
    open_with_bridge(notebook, rel)
    notebook.run_cell(0)
    output = notebook.cells.nth(0).locator(".jp-OutputArea-output")
    expect(output.get_by_role("button", name="live widget")).to_be_visible(timeout=STEP_MS)

    # Saved and reloaded: the page reconnects to the same kernel, which still has the widget.
    save_until(notebook, rel, lambda content: any(c.get("outputs") for c in content["cells"]))
    notebook.page.reload()
    notebook.page.wait_for_function("() => globalThis.__gth_jupyter_notebook__?.version === 1")
    notebook.wait_kernel(rel)
    expect(output.get_by_role("button", name="live widget")).to_be_visible(timeout=STEP_MS)

    # Kernel > Restart Kernel…: the widget ends, and the output falls back to its static copy.
    page = notebook.page
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel")).first.click()
    page.locator(".jp-Dialog-button.jp-mod-accept").click()
    expect(output).to_have_text("the static copy", timeout=STEP_MS)
    expect(notebook.page.get_by_text("Error displaying widget")).to_have_count(0)
