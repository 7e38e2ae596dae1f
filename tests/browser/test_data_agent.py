"""The data agent end to end: the kernel tools in a real JupyterLab 4 and Notebook 7, headless
Chromium.

- ``notebooks/data-agent.ipynb`` as shipped, on the offline demo model, with Run All: the
  variables table, the description, the plot code in the ``run_python`` card with the question
  under it (the code shown once), Approve, and the plot in the same card, at most its natural
  size, with the answer after it in view; then its notebook tools: the cell that fails on purpose
  (a ``KeyError``, with an Ask gth button) does not stop Run All, ``%gth --explain`` reads the
  notebook unasked and explains the ``KeyError``, and ``%gth put that in a cell`` asks (the
  shipped default, ``assisted``) before inserting the plot's code as a cell that runs, Approve,
  and the cell with its plot is in the notebook; no other error anywhere.
- On the scripted model, a plot made by ``run_python`` reaches the model exactly once, as an
  image block of a user message, and never as base64 in the tool result.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    ServerSpec,
    write_notebook,
)
from playwright.sync_api import Locator, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from gth_jupyter.config._jsonc import loads

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(300),
]

SHIPPED = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK = "data-agent.ipynb"
# The demo test's server runs on the configuration shipped beside the notebooks.
DEMO_CONFIG = loads((SHIPPED / ".gsloth.config.json").read_text())
KERNEL_TOOLS = ["list_variables", "describe_variable", "run_python"]
# The shipped notebook's plot cell (its id, kept in the copy the test opens).
PLOT_CELL = "d84a2b7f"
# Whether the output of cell [cellId] holds [text] in its text/plain, as the notebook model has
# it (the extension's bridge reads the model, unsaved changes included).
OUTPUT_HOLDS = """([cellId, text]) => {
  const handle = globalThis.__gth_jupyter_notebook__?.find({ cellId });
  const cell = handle?.read().cells.find((c) => c.id === cellId);
  const plain = (o) => [].concat(o.data?.["text/plain"] ?? []).join("");
  return (cell?.outputs ?? []).some((o) => plain(o).includes(text));
}"""

PLOT_CODE = "\n".join(
    [
        "import matplotlib.pyplot as plt",
        "agent_fig, agent_ax = plt.subplots(figsize=(3, 2))",
        "agent_ax.plot([1, 2, 3], [2, 1, 3])",
        "plt.show()",
    ]
)
AFTER_PLOT = "I can see a line that dips and rises."
SCRIPTS: dict[str, list[Any]] = {
    "image_once": [
        {
            "content": "Let me draw it.",
            "toolCalls": [
                {
                    "name": "run_python",
                    "args": {"code": PLOT_CODE, "justification": "Draw a small line plot."},
                }
            ],
        },
        AFTER_PLOT,
    ],
}
# Which server each test runs on: the shipped demo configuration, or the scripted model.
SERVER_OF = {
    "test_data_agent_notebook_run_all": "demo",
    "test_a_plot_reaches_the_model_once": "fake",
}


# Two servers per app (the ``servers`` fixture), each started by the first test that needs it:
# the shipped demo configuration, and the scripted model with the kernel tools turned on.
SERVERS = {
    "demo": ServerSpec(config=DEMO_CONFIG),
    "fake": ServerSpec(SCRIPTS, extra={"builtInTools": KERNEL_TOOLS}),
}


@pytest.fixture
def jupyter(request: pytest.FixtureRequest, servers: dict[str, JupyterServer]) -> JupyterServer:
    """This test's server (the ``notebook`` fixture opens its page on it)."""
    return servers[SERVER_OF[request.function.__name__]]


def wait_output_holds(nb: NotebookPage, cell_id: str, text: str) -> None:
    try:
        nb.page.wait_for_function(OUTPUT_HOLDS, arg=[cell_id, text], timeout=STEP_MS)
    except PlaywrightTimeout:
        outputs = nb.page.evaluate(
            """id => globalThis.__gth_jupyter_notebook__?.find({ cellId: id })
                ?.read().cells.find((c) => c.id === id)?.outputs""",
            cell_id,
        )
        raise AssertionError(f"cell {cell_id}'s output never held {text!r}: {outputs}") from None


def no_errors(nb: NotebookPage, expected: tuple[str, ...] = ()) -> None:
    """No chat error, and no traceback but the ``expected`` ones (a text each contains).
    textContent, not innerText: a cell out of view is not laid out, its innerText empty."""
    assert nb.page.locator(".gth-error").all_text_contents() == []
    outputs = nb.page.locator(".jp-OutputArea-output[data-mime-type*=stderr]").all_text_contents()
    errors = [o for o in outputs if "Error" in o or "Traceback" in o]
    assert len(errors) == len(expected), errors
    assert all(e in o for e, o in zip(expected, errors, strict=True)), errors


def test_data_agent_notebook_run_all(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    folder = f"shipped-{jupyter.app}"
    if not (jupyter.root / folder).exists():
        shutil.copytree(SHIPPED, jupyter.root / folder)
    notebook.open(f"{folder}/{NOTEBOOK}")
    notebook.run_all(timeout_s=240)
    listed, described, plot = (notebook.widget(i) for i in range(3))

    # What data do I have? A table of the kernel's variables.
    table = listed.locator(".gth-tool[data-tool-name=list_variables] table.gth-variables")
    expect(table).to_contain_text("sales", timeout=STEP_MS)
    expect(listed).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    # Describe sales: its schema and statistics.
    description = described.locator(".gth-tool[data-tool-name=describe_variable] .gth-describe")
    expect(description).to_contain_text("revenue", timeout=STEP_MS)
    expect(described).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.mark("list and describe shown")

    # Plot revenue by month: the run waits on the person's approval of the code, asked in the
    # run_python card under the code, which shows once.
    card = plot.locator(".gth-tool[data-tool-name=run_python]")
    approval = card.locator(".gth-approval")
    expect(approval).to_be_visible(timeout=STEP_MS)
    expect(approval.locator(".gth-approval-title")).to_have_text("Run this code in your kernel?")
    expect(approval).not_to_contain_text("approvals mode")
    code = card.locator("pre.gth-run-code")
    expect(code).to_contain_text("plt")
    expect(code).to_contain_text('sales.groupby("month"')
    expect(plot.locator("pre", has_text='sales.groupby("month"')).to_have_count(1)
    expect(plot.locator(".gth-approval")).to_have_count(1)
    # textContent: a cell out of view (the cells below push it out) is not laid out, so its
    # innerText would be empty.
    buttons = approval.locator(".gth-approval-actions button:visible").all_text_contents()
    assert buttons[0] == "Approve" and buttons[-2:] == ["Edit", "Reject"], buttons
    notebook.shot("approval", plot)
    approval.locator("button.gth-approve").click()
    expect(approval).to_have_attribute("data-state", "approved")

    # The plot lands in the same card, at most its natural size.
    image = card.locator("img.gth-tool-image")
    expect(image).to_have_count(1, timeout=60_000)
    expect(image).to_be_visible()
    answer = plot.locator(".gth-msg-assistant .gth-msg-content").last
    expect(answer).to_contain_text("plot is shown", timeout=STEP_MS)
    expect(plot).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    # The turn's end refreshes the cell's output with its static copy, which draws the widget
    # again (the cells below start their turns meanwhile): the plot is measured in the view
    # that stays.
    wait_output_holds(notebook, PLOT_CELL, "plot is shown")
    expect(plot).to_have_attribute("data-ready", "true", timeout=STEP_MS)
    expect(image).to_be_visible(timeout=STEP_MS)
    image.scroll_into_view_if_needed()
    # The drawn size without the border: getComputedStyle's width and height (content box).
    drawn = "i => [parseFloat(getComputedStyle(i).width), parseFloat(getComputedStyle(i).height)]"
    size = image.evaluate(
        "i => i.decode().then(() => { const s = getComputedStyle(i);"
        " return {w: i.naturalWidth, h: i.naturalHeight,"
        " rw: parseFloat(s.width), rh: parseFloat(s.height)}; })"
    )
    assert size["w"] > 100, size
    assert size["rw"] <= size["w"] + 0.5 and size["rh"] <= size["h"] + 0.5, size
    assert abs(size["rw"] / size["rh"] - size["w"] / size["h"]) < 0.02, size  # not distorted
    notebook.shot("plot", plot)
    # A click shows the plot whole (still never past its natural size), another shrinks it.
    image.click()
    expect(image).to_have_attribute("data-enlarged", "true")
    enlarged = image.evaluate(drawn)
    assert size["rw"] <= enlarged[0] <= size["w"] + 0.5, (size, enlarged)
    assert size["rh"] <= enlarged[1] <= size["h"] + 0.5, (size, enlarged)
    image.click()
    expect(image).to_have_attribute("data-enlarged", "false")
    notebook.mark("plot shown")
    explained, inserted = notebook.widget(3), notebook.widget(4)

    # The cell that fails on purpose (tagged raises-exception) failed, Run All went on past it,
    # and its traceback carries the Ask gth button.
    failing = notebook.cells.filter(has_text=re.compile(r'sales\["Revenue"\]\.sum\(\)'))
    expect(failing.locator(".jp-OutputArea-output")).to_contain_text("KeyError: 'Revenue'")
    expect(failing.locator(".gth-ask-button")).to_have_text("Ask gth", timeout=STEP_MS)
    # %gth --explain: the agent read the notebook (never asked) and explains the KeyError of
    # that cell, with the spelling the notebook holds.
    read = explained.locator(".gth-tool[data-tool-name=read_notebook]")
    expect(read.locator(".gth-nb-cell[data-error=true]")).to_contain_text(
        "KeyError", timeout=STEP_MS
    )
    expect(read.locator(".gth-approval")).to_have_count(0)
    answer = assistant(explained).last
    expect(answer).to_contain_text("failed with KeyError: 'Revenue'", timeout=STEP_MS)
    expect(answer).to_contain_text("use sales['revenue']")
    expect(explained).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.shot("explain", explained)

    # %gth put that in a cell: insert_cell with run is code, so at the shipped default
    # (assisted) its card asks, showing the plot's code; nothing is inserted before Approve.
    card = inserted.locator(".gth-tool[data-tool-name=insert_cell]")
    approval = card.locator(".gth-approval")
    expect(approval).to_be_visible(timeout=STEP_MS)
    expect(approval.locator(".gth-approval-title")).to_have_text("Run this code in your kernel?")
    expect(card.locator("pre.gth-run-code")).to_contain_text('sales.groupby("month"')
    cells = notebook.cells.count()
    notebook.shot("insert asks", inserted)
    approval.locator("button.gth-approve").click()
    expect(approval).to_have_attribute("data-state", "approved")
    # The new cell, right below the asking cell (the last), ran in the kernel: its plot is there.
    expect(notebook.cells).to_have_count(cells + 1, timeout=STEP_MS)
    new_cell = notebook.cells.last
    expect(new_cell.locator(".jp-InputArea-editor")).to_contain_text('sales.groupby("month"')
    expect(new_cell.locator(".jp-OutputArea-output img")).to_have_count(1, timeout=60_000)
    expect(new_cell.locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[\d+\]"))
    expect(card.locator(".gth-notebook-insert")).to_contain_text("ran as [", timeout=STEP_MS)
    expect(assistant(inserted).last).to_contain_text("is in your notebook", timeout=STEP_MS)
    expect(inserted).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    notebook.shot("inserted cell", new_cell)
    no_errors(notebook, expected=("KeyError",))

    # The plot's answer is in view in its transcript, below the plot (the transcript follows a
    # plot that loads after it scrolled), also in the view drawn again by the refresh.
    plot.scroll_into_view_if_needed()
    notebook.page.wait_for_function(
        """a => {
            const t = a.closest(".gth-transcript").getBoundingClientRect();
            const r = a.getBoundingClientRect();
            return r.height > 0 && r.top >= t.top - 1 && r.bottom <= t.bottom + 1;
        }""",
        arg=answer.element_handle(),
        timeout=STEP_MS,
    )


def assistant(root: Locator) -> Locator:
    return root.locator(".gth-msg-assistant .gth-msg-content")


def image_data(block: dict[str, Any]) -> str:
    """The base64 of an image block, whatever the provider's shape."""
    source = block.get("source")
    if isinstance(source, dict):
        return str(source.get("data", ""))
    url = block.get("image_url", block.get("url"))
    url = url.get("url") if isinstance(url, dict) else url
    if isinstance(url, str) and ";base64," in url:
        return url.split(";base64,", 1)[1]
    return str(block.get("data", block.get("base64", "")))


def all_image_blocks(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(message type, block) for every image block in every message of every model call."""
    found = []
    for record in records:
        for message in record["messages"]:
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") in ("image", "image_url"):
                    found.append((str(message.get("type")), block))
    return found


def test_a_plot_reaches_the_model_once(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    script = jupyter.use_script("image_once")
    rel = f"plot-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth draw me a line"])
    notebook.open(rel)
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()

    card = root.locator(".gth-tool[data-tool-name=run_python]")
    approval = card.locator(".gth-approval")
    expect(approval).to_be_visible(timeout=STEP_MS)
    expect(card.locator("pre.gth-run-code")).to_contain_text("plt")
    approval.locator("button.gth-approve").click()
    expect(approval).to_have_attribute("data-state", "approved")
    image = root.locator(".gth-tool[data-tool-name=run_python] img.gth-tool-image")
    expect(image).to_be_visible(timeout=60_000)
    last = root.locator(".gth-msg-assistant .gth-msg-content").last
    expect(last).to_have_text(AFTER_PLOT, timeout=STEP_MS)
    notebook.shot("plot")

    records = script.wait_records(2)
    assert len(records) == 2, records
    assert set(KERNEL_TOOLS) <= set(records[0]["tools"])
    blocks = all_image_blocks(records)
    assert [kind for kind, _ in blocks] == ["human"], blocks
    data = image_data(blocks[0][1])
    assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    # The PNG appears once in all the model received, in that block, and never in a tool result.
    assert sum(json.dumps(r).count(data) for r in records) == 1
    tool_results = [m for r in records for m in r["messages"] if m.get("type") == "tool"]
    assert tool_results, "the run_python result reached the model"
    for message in tool_results:
        assert data not in json.dumps(message)
        assert "iVBORw0KGgo" not in json.dumps(message)  # no PNG base64 at all
    no_errors(notebook)
