"""A notebook's ``%gth`` answers reach the saved file, JupyterLab 4 and Notebook 7: each turn
runs in the server (HTTP), the page reads the turn's static copy from the server when it ends and
writes it into the cell's output beside the widget (the notebook extension), and saving stores it.

- Run All on a chat cell, a data-agent cell whose ``run_python`` draws a matplotlib plot and a
  photo cell (``capture_image``, Chromium's fake camera), then save: each output holds its answer
  as text/html, text/markdown and text/plain (no object repr), the plot as an inline PNG, the
  photo as the placeholder (no JPEG in the file); nbconvert's HTML, opened in the browser, shows
  them and no widget error; a reloaded page shows each answer once, and the copy each widget
  asks for again comes back unchanged and is not written (the notebook stays clean); after a
  server restart (a new kernel) each cell shows its answer and never "Error displaying widget".
- A turn that ends after a reload still reaches the saved file, through the notebook extension.
"""

from __future__ import annotations

import base64
import re
import subprocess
import sys
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
from playwright.sync_api import Locator, Page, expect

from gth_jupyter.copy import PHOTO_NOTE

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(240),
]

HELLO = "Hello from the **saved** answer."
PLOT_CODE = "\n".join(
    [
        "import matplotlib.pyplot as plt",
        "agent_fig, agent_ax = plt.subplots(figsize=(3, 2))",
        "agent_ax.plot([1, 2, 3], [2, 1, 3])",
        "plt.show()",
    ]
)
AFTER_PLOT = "The line dips, then rises."
CHEESE = "Say cheese!"
AFTER_PHOTO = "I can see the test pattern."
SLOW = [f"w{i}" for i in range(1, 301)]  # ~12 s: long enough to reload the page mid-turn
SCRIPTS: dict[str, list[Any]] = {
    "reload": [{"content": " ".join(SLOW) + " **reloaded**", "delayMs": 40}],
    # Run All: the chat cell, the plot cell (run_python, then the answer), the photo cell.
    "run_all": [
        HELLO,
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
        {"content": CHEESE, "toolCalls": [{"name": "capture_image", "args": {}}]},
        AFTER_PHOTO,
    ],
}
# The kernel tools on, and run_python allowed so Run All needs no click.
EXTRA_CONFIG = {
    "builtInTools": ["show_a2ui_surface", "list_variables", "describe_variable", "run_python"],
    "approvals": {"allow": [{"type": "tool", "matcher": "exact", "pattern": "run_python"}]},
}
# The kernel reads the server's threads from the shared SQLite file, as by default.
CHECKPOINTER = "sqlite"
# Each %gth cell of the Run All notebook (by index) and a text its answer holds.
ANSWERS = {1: "Hello from the", 2: AFTER_PLOT, 3: AFTER_PHOTO}
PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
# A turn's cost line on the scripted model (its estimated counts; it costs nothing).
COST_LINE = re.compile(r"^[\d,]+ in · [\d,]+ out · \$0\.00$")
# On the page, from its start: whether a widget error was ever drawn, however briefly, and each
# static copy the page handed to the notebook extension (setStaticCopy) with its result.
WATCH_PAGE = """
window.__gthWidgetErrors = [];
window.__gthStaticCopies = [];
new MutationObserver((records) => {
  for (const r of records) {
    for (const node of r.addedNodes) {
      const text = node.textContent || "";
      if (text.includes("Error displaying widget")) window.__gthWidgetErrors.push(text);
    }
  }
}).observe(document, { childList: true, subtree: true });
let bridge;
Object.defineProperty(globalThis, "__gth_jupyter_notebook__", {
  configurable: true,
  get: () => bridge,
  set(value) {
    const find = value.find.bind(value);
    value.find = (query) => {
      const handle = find(query);
      if (handle) {
        const set = handle.setStaticCopy.bind(handle);
        handle.setStaticCopy = (copy) => {
          const result = set(copy);
          window.__gthStaticCopies.push([copy.displayId, result]);
          return result;
        };
      }
      return handle;
    };
    bridge = value;
  },
});
"""


def saved_cells(notebook: NotebookPage, until: Any, timeout_s: float = 60) -> list[Any]:
    """Saves (each save awaited, then the file read) until the file's cells satisfy ``until``:
    the kernel's display update comes after the run's end, so an early save holds the waiting
    copy."""
    content = notebook.save_until(lambda c: bool(c["cells"]) and until(c["cells"]), timeout_s)
    return list(content["cells"])


def answered(word: str, index: int = 1) -> Any:
    def check(cells: list[Any]) -> bool:
        outputs = cells[index].get("outputs", [])
        return any(word in str(o.get("data", {}).get("text/plain", "")) for o in outputs)

    return check


def test_a_turn_that_ends_after_a_reload_still_reaches_the_saved_file(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    """JupyterLab sends a display update only to the page that ran the cell: the reloaded page
    writes the copy into the notebook itself, through the notebook extension."""
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


def all_answered(cells: list[Any]) -> bool:
    """Each %gth cell's saved text/plain holds its answer (not the waiting copy)."""
    return all(answered(text, index)(cells) for index, text in ANSWERS.items())


def shown_once(chat: Locator, text: str) -> None:
    expect(chat.locator(".gth-msg-assistant", has_text=text)).to_have_count(1, timeout=STEP_MS)


def widget_errors(page: Page) -> list[str]:
    return list(page.evaluate("() => window.__gthWidgetErrors ?? ['the watcher did not run']"))


def check_static_copy(output: dict[str, Any], answer: str) -> dict[str, str]:
    """One %gth output as saved: the widget view beside the static copy, the answer in each of
    the copy's mimetypes, no object repr. Returns the copy."""
    assert output["output_type"] == "display_data"  # no execute_result beside it
    assert output["metadata"]["gth_jupyter"]["display"].startswith("gth-")
    data = {k: v if isinstance(v, str) else "".join(v) for k, v in output["data"].items()}
    assert WIDGET_VIEW in output["data"]
    assert 'class="gth-static-copy"' in data["text/html"]
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert answer in data[mime], (mime, data[mime])
        assert "GthChat object" not in data[mime] and "waiting for the agent" not in data[mime]
    return data


@pytest.mark.timeout(480)
def test_run_all_saves_each_answer_statically_and_reopens_without_widget_errors(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    script = jupyter.use_script("run_all")
    rel = f"run-all-saved-{jupyter.app}.ipynb"
    path = jupyter.root / rel
    write_notebook(
        path,
        ["%load_ext gth_jupyter", "%gth hello?", "%gth draw me a line", "%gth take a photo of me"],
    )
    notebook.page.add_init_script(WATCH_PAGE)
    notebook.open(rel)
    notebook.run_all()
    chat, plot, photo = (notebook.ready_widget(i) for i in range(3))
    expect(chat.locator(".gth-msg-assistant strong")).to_have_text("saved", timeout=STEP_MS)
    expect(plot.locator("img.gth-tool-image")).to_be_visible(timeout=60_000)
    shown_once(plot, AFTER_PLOT)
    expect(photo.locator("img.gth-thumb")).to_be_visible(timeout=STEP_MS)
    shown_once(photo, AFTER_PHOTO)
    for widget in (chat, plot, photo):
        expect(widget).to_have_attribute("data-state", "idle", timeout=STEP_MS)
    # Each answer is shown once: the widget, not the static copy beside it.
    expect(notebook.page.locator(".gth-static-copy")).to_have_count(0)
    assert transcript(chat) == [("user", "hello?"), ("assistant", "Hello from the saved answer.")]
    # Each turn ends with its cost line (the photo turn's two runs in one line), and the header
    # says what the conversation has cost so far.
    lines = {}
    for index, widget in zip(ANSWERS, (chat, plot, photo), strict=True):
        expect(widget.locator(".gth-usage")).to_have_text(COST_LINE, timeout=STEP_MS)
        lines[index] = widget.locator(".gth-usage").text_content()
        assert widget.locator(".gth-turn-end").last.evaluate(
            "e => e === e.parentElement.lastElementChild"
        ), "the line ends the turn"
    expect(photo.locator(".gth-usage-total")).to_have_text(re.compile(r"^Σ [\d,]+ in · "))
    # What the model was sent in the plot turn: the run_python result among the items.
    context = plot.locator(".gth-context")
    context.locator("summary").first.click()
    expect(context.locator(".gth-context-call")).to_have_count(2, timeout=STEP_MS)
    result = context.locator(".gth-context-item summary", has_text="run_python result")
    expect(result).to_have_text(re.compile(r"^tool · run_python result · [\d,]+ tokens"))
    expect(context.locator(".gth-context-largest li").first).to_contain_text("% of this call")
    notebook.mark("answers shown")

    # Saved: each %gth output holds its answer statically.
    cells = saved_cells(notebook, all_answered, timeout_s=90)
    notebook.mark("answers saved")
    copies = {}
    for index, answer in ANSWERS.items():
        (output,) = cells[index]["outputs"]  # one output per cell: nothing shown twice
        copies[index] = check_static_copy(output, answer)
    assert "<strong>saved</strong>" in copies[1]["text/html"]
    for index, line in lines.items():  # the copy says what the turn cost, as the widget did
        assert f">{line}<" in copies[index]["text/html"] and line in copies[index]["text/markdown"]
    # The plot, inline in the copy as the PNG the kernel drew.
    (plot_png,) = PNG.findall(copies[2]["text/html"])
    assert base64.b64decode(plot_png)[:8] == b"\x89PNG\r\n\x1a\n"
    # The photo as its placeholder: no JPEG anywhere in the file.
    assert PHOTO_NOTE in copies[3]["text/html"]
    assert "A photo was taken" in copies[3]["text/markdown"]  # Markdown-escaped past that
    saved_text = path.read_text(encoding="utf-8")
    assert "image/jpeg" not in saved_text and "GthChat object" not in saved_text
    assert set(re.findall(r"data:(image/[a-z]+);base64", saved_text)) == {"image/png"}

    # nbconvert's HTML, as a browser shows it (no network: a widget manager from a CDN cannot
    # load): every answer from its copy, the plot drawn, the placeholder, no widget error.
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    exported = path.with_suffix(".html")
    assert "Error displaying widget" not in exported.read_text(encoding="utf-8")
    viewer = notebook.page.context.new_page()
    viewer.route(re.compile(r"^(?!file:)"), lambda route: route.abort())
    viewer.goto(exported.as_uri(), wait_until="domcontentloaded")
    shown = viewer.locator(".gth-static-copy")
    expect(shown).to_have_count(3)
    expect(shown.nth(0).locator(".gth-copy-answer strong")).to_have_text("saved")
    expect(shown.nth(1)).to_contain_text(AFTER_PLOT)
    drawn = shown.nth(1).locator("img[src^='data:image/png;base64,']")
    viewer.wait_for_function("i => i.complete && i.naturalWidth > 100", arg=drawn.element_handle())
    expect(shown.nth(2)).to_contain_text(PHOTO_NOTE)
    expect(shown.nth(2)).to_contain_text(AFTER_PHOTO)
    for nth, line in enumerate(lines.values()):
        expect(shown.nth(nth).locator(".gth-copy-usage")).to_have_text(line)
    expect(viewer.get_by_text("Error displaying widget")).to_have_count(0)
    assert "GthChat object" not in viewer.locator("body").inner_text()
    viewer.close()
    notebook.mark("nbconvert html checked")

    # A reloaded page (same kernel): one live widget per cell, each answer once, no copy beside.
    # Each widget mounts on its answered turn and gets its copy with its history; the copy is
    # unchanged, so the notebook extension writes nothing (the notebook stays clean).
    notebook.page.reload()
    expect(notebook.cells.first).to_be_visible(timeout=60_000)
    chat, plot, photo = (notebook.ready_widget(i) for i in range(3))
    for index in ANSWERS:
        expect(notebook.cells.nth(index).locator(".gth-root")).to_have_count(1)
    shown_once(chat, "Hello from the")
    shown_once(plot, AFTER_PLOT)
    shown_once(photo, AFTER_PHOTO)
    for index, widget in zip(ANSWERS, (chat, plot, photo), strict=True):  # the lines, again
        expect(widget.locator(".gth-usage")).to_have_text(lines[index], timeout=STEP_MS)
        expect(widget.locator(".gth-usage-total")).to_have_text(re.compile(r"^Σ [\d,]+ in · "))
    expect(notebook.page.locator(".gth-root")).to_have_count(3)
    expect(notebook.page.locator(".gth-static-copy")).to_have_count(0)
    assert notebook.page.locator(".gth-error").all_text_contents() == []
    notebook.page.wait_for_function("() => window.__gthStaticCopies.length >= 3")
    copied = notebook.page.evaluate("() => window.__gthStaticCopies")
    assert sorted(d for d, _ in copied) == sorted(
        o["metadata"]["gth_jupyter"]["display"] for o in (cells[i]["outputs"][0] for i in ANSWERS)
    ), copied
    assert all(found is True for _, found in copied), copied
    if jupyter.app == "lab":
        expect(notebook.page.locator(".lm-TabBar-tab.jp-mod-current")).not_to_have_class(
            re.compile("jp-mod-dirty")
        )
    shown_once(chat, "Hello from the")
    assert widget_errors(notebook.page) == []
    assert len(script.records()) == 5  # the reload sent nothing again
    notebook.mark("reload checked")

    # The server restarted (its kernels gone), the notebook reopened with a new kernel: each
    # %gth cell shows its answer (the rebuilt widget or the static copy), never a widget error.
    jupyter.restart("run_all")
    notebook.open(rel)
    for index, answer in ANSWERS.items():
        shows = notebook.cells.nth(index).locator(".gth-root, .gth-static-copy")
        expect(shows).to_have_count(1, timeout=STEP_MS)
        expect(shows).to_contain_text(answer, timeout=STEP_MS)
    expect(notebook.page.get_by_text("Error displaying widget")).to_have_count(0)
    assert widget_errors(notebook.page) == []
    assert notebook.page.locator(".gth-error").all_text_contents() == []
    assert jupyter.calls() == 0  # reopening asked the model nothing
    notebook.shot("reopened with a new kernel")
