"""Themes and the event log's sequence diagram, in a real JupyterLab 4 and Notebook 7.

- The widget takes its colours from JupyterLab's theme variables: switched to JupyterLab Dark
  through the Settings menu, its background, text, borders and accent follow at once (no
  re-render), and so does the diagram. Screenshots of both themes go to
  ``test-artifacts/browser/`` (``…-light.png``, ``…-dark.png``).
- ``%gth --log`` during a client-tool cycle (capture_image) draws the arrows of the cycle in
  order: the POST, the AG-UI event groups, the suspend, the page fulfilling the tool, the
  resuming POST; the diagram downloads as an SVG file, and the list view is one click away.
- ``notebooks/frontend-tools.ipynb`` (a copy on the scripted model), Run All: each of its two
  ``%gth --log`` cells draws its own cycle for the browser tool it names.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from browser_harness import (
    ARTIFACTS,
    CHROMIUM,
    REPO,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    write_notebook,
)
from playwright.sync_api import Page, expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(180),
]

HELLO = "Hello from the scripted model, in whichever theme you like."
AFTER_PHOTO = "I can see the fake camera's test pattern."
SCRIPTS: dict[str, list[Any]] = {
    "theme": [HELLO],
    "diagram": [
        {"content": "Say cheese!", "toolCalls": [{"name": "capture_image", "args": {}}]},
        AFTER_PHOTO,
    ],
    # What the demo model does with the teaching notebook, with exact replies.
    "teaching": [
        {
            "content": "Calling your `roll_dice` tool.",
            "toolCalls": [{"name": "roll_dice", "args": {"n": 3}}],
        },
        "You rolled three dice.",
        {
            "content": "Calling your `page_title` tool.",
            "toolCalls": [{"name": "page_title", "args": {}}],
        },
        "That is your tab's title.",
    ],
}
LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"

# The widget's colours next to the theme's, each resolved to rgb() by the browser.
COLOURS_JS = """root => {
  const probe = document.createElement('span');
  document.body.append(probe);
  const resolve = (value) => {
    probe.style.color = '';
    probe.style.color = value.trim();
    return getComputedStyle(probe).color;
  };
  const theme = getComputedStyle(document.body);
  const jp = (name) => resolve(theme.getPropertyValue(name));
  const style = (sel) => getComputedStyle(sel ? root.querySelector(sel) : root);
  const out = {
    bg: style().backgroundColor,
    fg: style().color,
    border: style().borderTopColor,
    accent: style('.gth-send').backgroundColor,
    laneTitle: style('.gth-seq-lane-title').fill,
    labelHalo: style('.gth-seq-label').stroke,
    jpBg: jp('--jp-layout-color0'),
    jpFg: jp('--jp-ui-font-color1'),
    jpBorder: jp('--jp-border-color1'),
    jpBrand: jp('--jp-brand-color1'),
    themeLight: document.body.dataset.jpThemeLight,
    colorScheme: style().colorScheme,
  };
  probe.remove();
  return out;
}"""


def open_chat(nb: NotebookPage, name: str, cells: list[str]) -> None:
    rel = f"{name}.ipynb"
    write_notebook(nb.server.root / rel, [*cells, ""])
    nb.open(rel)
    nb.run_cells(*range(len(cells)))


def switch_theme(page: Page, theme: str) -> None:
    """Settings > Theme > <theme>, as a person does (both apps have the menu)."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(theme)}$")).click()
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", theme, timeout=STEP_MS)
    page.keyboard.press("Escape")


def luminance(rgb: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", rgb)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_widget_follows_the_jupyterlab_theme(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    jupyter.use_script("theme")
    open_chat(notebook, f"theme-{jupyter.app}", ["%load_ext gth_jupyter", "%gth --log hello"])
    root = notebook.ready_widget()
    expect(root.locator(".gth-msg-assistant .gth-msg-content")).to_have_text(HELLO, timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")
    page = notebook.page
    if page.locator("body").get_attribute("data-jp-theme-name") != LIGHT:
        switch_theme(page, LIGHT)
    light = root.evaluate(COLOURS_JS)
    light_shot = notebook.shot("light")
    try:
        switch_theme(page, DARK)
        # The same widget, not re-rendered: its colours follow the variables at once.
        expect(root.locator(".gth-msg-assistant .gth-msg-content")).to_have_text(HELLO)
        dark = root.evaluate(COLOURS_JS)
        dark_shot = notebook.shot("dark")
    finally:
        switch_theme(page, LIGHT)  # the module's next test starts light again

    for colours, is_light in ((light, "true"), (dark, "false")):
        assert colours["themeLight"] == is_light, colours
        assert colours["bg"] == colours["jpBg"], colours
        assert colours["fg"] == colours["jpFg"], colours
        assert colours["border"] == colours["jpBorder"], colours
        assert colours["accent"] == colours["jpBrand"], colours
        assert colours["laneTitle"] == colours["jpFg"], colours  # the diagram too
        assert colours["labelHalo"] == colours["jpBg"], colours
    assert light["bg"] != dark["bg"] and light["fg"] != dark["fg"]
    assert luminance(light["bg"]) > 0.8 > 0.2 > luminance(dark["bg"])
    assert luminance(dark["fg"]) > 0.6
    assert dark["colorScheme"] == "dark"
    assert light_shot.exists() and dark_shot.exists()
    assert not root.locator(".gth-error").count()


def arrows(root: Any) -> list[dict[str, str]]:
    return list(
        root.locator("g.gth-seq-arrow").evaluate_all(
            """gs => gs.map(g => ({kind: g.dataset.kind, from: g.dataset.from, to: g.dataset.to,
                                   type: g.dataset.type, count: g.dataset.count,
                                   label: g.querySelector('text').textContent}))"""
        )
    )


def test_diagram_draws_the_client_tool_cycle(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    jupyter.use_script("diagram")
    open_chat(
        notebook, f"diagram-{jupyter.app}", ["%load_ext gth_jupyter", "%gth --log take a photo"]
    )
    root = notebook.ready_widget()
    log = root.locator(".gth-eventlog")
    expect(log).to_be_visible()
    expect(log).to_have_attribute("data-mode", "diagram")
    expect(root.locator(".gth-seq-svg")).to_be_visible()
    # The suspend is drawn while the page is still taking the photo or just after.
    expect(root.locator("g.gth-seq-arrow[data-kind=suspend]")).to_have_count(1, timeout=STEP_MS)
    expect(root.locator(".gth-msg-assistant .gth-msg-content").last).to_have_text(
        AFTER_PHOTO, timeout=STEP_MS
    )
    expect(root).to_have_attribute("data-state", "idle")
    expect(root.locator("g.gth-seq-arrow[data-kind=finish]")).to_have_count(1)
    notebook.shot("diagram")

    drawn = arrows(root)
    key = [(a["kind"], a["from"], a["to"]) for a in drawn if a["kind"] != "note"]
    labels = [a["label"] for a in drawn if a["kind"] != "note"]
    assert key == [
        ("request", "page", "server"),  # POST run
        ("event", "server", "page"),  # RUN_STARTED
        ("graph", "server", "graph"),
        ("event", "graph", "page"),  # the text message "Say cheese!"
        ("event", "graph", "page"),  # the capture_image tool call
        ("graph", "graph", "server"),
        ("suspend", "server", "page"),  # RUN_FINISHED with pendingToolCallIds
        ("fulfil", "page", "page"),  # the browser takes the photo
        ("request", "page", "server"),  # the resuming POST
        ("event", "server", "page"),
        ("graph", "server", "graph"),
        ("event", "graph", "page"),
        ("graph", "graph", "server"),
        ("finish", "server", "page"),
    ], labels
    assert labels[0] == "POST run"
    assert labels[1].startswith("RUN_STARTED")
    assert labels[3].startswith("TEXT_MESSAGE: START · CONTENT")
    assert labels[4] == "TOOL_CALL capture_image: START · ARGS · END" or labels[4].startswith(
        "TOOL_CALL capture_image: START"
    )
    assert labels[6] == "RUN_FINISHED pending: capture_image"
    assert labels[7] == "fulfil capture_image done ✓"
    assert labels[8] == "POST run · resume: tool results"
    assert labels[10] == "resume the graph"
    assert labels[13] == "RUN_FINISHED success"
    # The deltas of the answer share one arrow with their count.
    answer = drawn[[a["kind"] for a in drawn].index("finish") - 2]
    assert int(answer["count"]) >= len(AFTER_PHOTO.split()), answer

    # Export SVG downloads the picture.
    with notebook.page.expect_download() as download_info:
        root.locator("button.gth-eventlog-export").click()
    download = download_info.value
    assert download.suggested_filename == "gth-sequence.svg"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    saved = ARTIFACTS / f"{notebook.name}-sequence.svg"
    download.save_as(saved)
    svg = saved.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in svg
    assert "RUN_FINISHED pending: capture_image" in svg
    assert "POST run · resume: tool results" in svg

    # The text log stays one click away.
    root.locator("button.gth-eventlog-mode[data-mode=list]").click()
    expect(log).to_have_attribute("data-mode", "list")
    expect(root.locator(".gth-seq-svg")).to_be_hidden()
    expect(root.locator(".gth-event[data-type=TOOL_CALL_START]")).to_be_visible()
    expect(root.locator(".gth-event[data-type=RUN_FINISHED]")).to_have_count(2)
    notebook.shot("list")
    assert not root.locator(".gth-error").count()


def run_all(nb: NotebookPage, timeout_s: float = 120) -> None:
    """Run > Run All Cells from the menu bar; waits until every code cell has its count."""
    nb.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    nb.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    prompts = nb.page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt")
    deadline = time.monotonic() + timeout_s
    while True:
        texts = prompts.all_inner_texts()
        if texts and all(re.fullmatch(r"\[\d+\]:?", t.strip()) for t in texts):
            return
        assert time.monotonic() < deadline, f"Run All did not finish: {texts}"
        time.sleep(0.2)


@pytest.mark.parametrize("jupyter", ["lab"], indirect=True)
def test_teaching_notebook_draws_each_cycle(jupyter: JupyterServer, notebook: NotebookPage) -> None:
    jupyter.use_script("teaching")
    shipped = json.loads((REPO / "notebooks" / "frontend-tools.ipynb").read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in shipped["cells"] if c["cell_type"] == "markdown")
    assert "sequence" in text and "diagram" in text  # the notebook points at the diagram
    rel = "teaching/frontend-tools.ipynb"
    (jupyter.root / "teaching").mkdir(parents=True, exist_ok=True)
    (jupyter.root / rel).write_text(json.dumps(shipped), encoding="utf-8")
    notebook.open(rel)
    run_all(notebook)
    roots = notebook.page.locator(".gth-root")
    expect(roots).to_have_count(2, timeout=STEP_MS)
    for index, tool in enumerate(["roll_dice", "page_title"]):
        root = notebook.ready_widget(index)
        expect(root.locator(".gth-eventlog")).to_be_visible()
        expect(root.locator("g.gth-seq-arrow[data-kind=finish]")).to_have_count(1, timeout=STEP_MS)
        labels = [a["label"] for a in arrows(root) if a["kind"] != "note"]
        assert f"RUN_FINISHED pending: {tool}" in labels, labels
        assert f"fulfil {tool} done ✓" in labels, labels
        assert labels.index(f"RUN_FINISHED pending: {tool}") < labels.index(
            "POST run · resume: tool results"
        ), labels
        assert not root.locator(".gth-error").count()
    notebook.widget(0).scroll_into_view_if_needed()
    notebook.shot("teaching-diagram")
