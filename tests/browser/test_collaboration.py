"""The notebook bridge with jupyter-collaboration installed: two pages on one shared document,
the bridge's edits in one merge into what the other sees, and a person's concurrent edit in the
other survives. JupyterLab 4 and Notebook 7, headless Chromium, a real kernel; no model is called.

jupyter-collaboration switches real-time collaboration on for every server of the environment it
is installed in, so it never goes into ``.venv``: it lives in ``.venv/collab/``, an overlay of
only the packages it adds (``uv pip install --target``), which only this module's servers put on
their path (``PYTHONPATH``, ``JUPYTER_CONFIG_PATH``, ``JUPYTER_PATH``). The first run makes it
(about a second with uv's cache, a few more from PyPI); without network the module skips.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import (
    APPS,
    CHROMIUM,
    REPO,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    serving,
    slug,
    write_notebook,
)
from playwright.sync_api import Locator, WebSocketRoute, expect
from test_notebook_bridge import call, cell_ids, open_with_bridge, save_until

from gth_jupyter.copy.provenance import source_hash

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(300),
]

SCRIPTS: dict[str, list[Any]] = {"default": []}

COLLABORATION = "jupyter-collaboration>=5,<6"
OVERLAY = REPO / ".venv" / "collab"
STAMP = OVERLAY / ".complete"
# What uv's --dry-run says it would add to the test environment: " + name==version".
WOULD_ADD = re.compile(r"^ \+ (\S+==\S+)$", re.MULTILINE)


def _uv(*args: str) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed: cannot install jupyter-collaboration")
    return subprocess.run([uv, *args], capture_output=True, text=True, timeout=300)


def collaboration_overlay() -> Path:
    """``.venv/collab``: jupyter-collaboration and exactly what it adds to this environment,
    made on first use (the packages uv would install into ``.venv``, installed elsewhere)."""
    if STAMP.exists() and STAMP.read_text() == COLLABORATION:
        return OVERLAY
    plan = _uv("pip", "install", "--dry-run", "--python", sys.executable, COLLABORATION)
    if plan.returncode != 0:
        pytest.skip(f"cannot install {COLLABORATION}: {plan.stderr.strip()[-500:]}")
    adds = WOULD_ADD.findall(plan.stderr + plan.stdout)
    if not adds:
        raise AssertionError(
            f"{COLLABORATION} adds nothing to {sys.prefix}: is it installed there? It would turn"
            f" collaboration on for every test server.\n{plan.stderr}"
        )
    # Made beside it, then renamed: an interrupted install leaves no half overlay.
    OVERLAY.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="collab-", dir=OVERLAY.parent))
    done = _uv("pip", "install", "-q", "--no-deps", "--target", str(building), *adds)
    if done.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        pytest.skip(f"cannot install {COLLABORATION}: {done.stderr.strip()[-500:]}")
    (building / STAMP.name).write_text(COLLABORATION)
    shutil.rmtree(OVERLAY, ignore_errors=True)
    building.rename(OVERLAY)
    return OVERLAY


class CollaborativeServer(JupyterServer):
    """A JupyterServer whose Python and Jupyter paths also hold the overlay (first, so that
    its server extension and lab extensions load; the rest comes from ``.venv``)."""

    overlay: Path

    def env(self) -> dict[str, str]:
        env = super().env()

        def first(name: str, path: Path) -> str:
            return os.pathsep.join([str(path), *filter(None, [env.get(name)])])

        env["PYTHONPATH"] = first("PYTHONPATH", self.overlay)
        env["JUPYTER_CONFIG_PATH"] = first("JUPYTER_CONFIG_PATH", self.overlay / "etc" / "jupyter")
        env["JUPYTER_PATH"] = first("JUPYTER_PATH", self.overlay / "share" / "jupyter")
        return env


@pytest.fixture(scope="module", params=APPS)
def jupyter(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, chromium: Any
) -> Iterator[JupyterServer]:
    """This module's server: as tests/browser/conftest.py's, with collaboration on."""
    overlay = collaboration_overlay()
    home = tmp_path_factory.mktemp(f"jupyter-collab-{request.param}")
    server = CollaborativeServer(request.param, home, SCRIPTS)
    server.overlay = overlay
    with serving(server, f"{slug(__name__)}-{request.param}"):
        yield server


class HeldRoom:
    """The second page's connection to the document's room, which the test can hold: while
    held, what the page sends and what it would receive wait here, so both pages edit without
    having seen the other's edits (truly concurrent); ``release`` delivers them in order."""

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.held = False
        self.waiting: list[tuple[str, WebSocketRoute, str | bytes]] = []

    def route(self, page_side: WebSocketRoute) -> None:
        self.urls.append(page_side.url)
        server_side = page_side.connect_to_server()
        page_side.on_message(lambda m: self._pass("to server", server_side, m))
        server_side.on_message(lambda m: self._pass("to page", page_side, m))

    def _pass(self, way: str, to: WebSocketRoute, message: str | bytes) -> None:
        if self.held:
            self.waiting.append((way, to, message))
        else:
            to.send(message)

    def ways_held(self) -> set[str]:
        return {way for way, _, _ in self.waiting}

    def release(self) -> None:
        self.held = False
        for _, to, message in self.waiting:
            to.send(message)
        self.waiting.clear()


@pytest.fixture
def second_page(
    request: pytest.FixtureRequest, chromium: Any, jupyter: JupyterServer
) -> Iterator[NotebookPage]:
    """Another client: a browser context of its own (no shared storage with the first)."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield NotebookPage(page, jupyter, slug(request.node.name) + "-second")
    finally:
        context.close()


def source(nb: NotebookPage, index: int) -> Locator:
    return nb.cells.nth(index).locator(".jp-InputArea-editor .cm-content")


def test_bridge_edits_merge_into_the_shared_document(
    jupyter: JupyterServer, notebook: NotebookPage, second_page: NotebookPage
) -> None:
    rel = f"collab-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["a = 2", "%gth is asking here", "b = 1", "c = 3"])
    ids = cell_ids(jupyter, rel)
    room = HeldRoom()
    second_page.page.route_web_socket(re.compile(r"/api/collaboration/room/"), room.route)
    open_with_bridge(notebook, rel)
    open_with_bridge(second_page, rel)
    notebook.run_cell(0)
    # Collaboration is on: the page joined the document's room on the server.
    assert room.urls, "the second page opened no collaboration room"
    expect(source(second_page, 3)).to_have_text("c = 3")

    # The person, in the second page, changes the last cell (not saved) while, through the
    # first page's bridge, the agent edits one cell and inserts and runs another; neither page
    # sees the other's edits until both are made.
    room.held = True
    source(second_page, 3).click()
    second_page.page.keyboard.press("Control+a")
    second_page.page.keyboard.type("c = 4  # edited in B")
    expect(source(second_page, 3)).to_have_text("c = 4  # edited in B")
    edited = call(notebook, ids[1], "editCell", {"cellId": ids[2], "source": "b = 10"})
    assert edited == {"cellId": ids[2], "index": 2, "before": "b = 1", "after": "b = 10"}
    inserted = call(
        notebook,
        ids[1],
        "insertCell",
        {"source": "print(a * 3)", "run": True, "turnId": "turn-1"},
    )
    assert inserted["index"] == 2
    assert inserted["status"] == "ok"
    assert inserted["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "6\n"}]
    assert second_page.cells.count() == 4
    assert source(notebook, 4).inner_text() == "c = 3"
    # Both edits were held on the way (B's to the server, A's to B), not merely slow.
    assert room.ways_held() == {"to server", "to page"}
    room.release()

    # The second page sees the inserted cell with its output and mark, and the edit.
    expect(second_page.cells).to_have_count(5, timeout=STEP_MS)
    expect(second_page.cells.nth(2).locator(".jp-OutputArea-output")).to_have_text("6")
    expect(source(second_page, 3)).to_have_text("b = 10")
    seen_b = call(second_page, ids[1], "read")["cells"]
    assert seen_b[2]["id"] == inserted["cellId"]
    marks = seen_b[2]["metadata"]["gth"]
    assert (marks["turnId"], marks["change"]) == ("turn-1", "inserted")
    assert marks["sourceHash"] == source_hash("print(a * 3)")
    assert seen_b[2]["outputs"] == inserted["outputs"]
    assert seen_b[4]["source"] == "c = 4  # edited in B"
    # And the first page has the second's edit: merged, not overwritten.
    expect(source(notebook, 4)).to_have_text("c = 4  # edited in B")
    expected = ["a = 2", "%gth is asking here", "print(a * 3)", "b = 10", "c = 4  # edited in B"]
    assert [c["source"] for c in call(notebook, ids[1], "read")["cells"]] == expected

    content = save_until(
        notebook, rel, lambda c: [cell["source"] for cell in c["cells"]] == expected
    )
    kept = content["cells"][2]
    assert kept["id"] == inserted["cellId"]
    assert kept["metadata"]["gth"] == marks
    assert kept["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "6\n"}]
