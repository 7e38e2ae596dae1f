"""MCP OAuth in a real JupyterLab 4 and Notebook 7, headless Chromium: a server that needs the
person to sign in shows a Sign in button in the chat; the click opens its authorization page in a
new tab, which comes back to ``{base_url}gth/oauth/callback`` with the login cookie, and the
server is connected. The authorization server and the protected MCP server run on loopback."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from browser_harness import (
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    write_notebook,
)
from playwright.sync_api import expect

pytest.importorskip("langchain_mcp_adapters")

from tests.tools.mcp_oauth_server import serve_protected

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(150),
]

SCRIPTS: dict[str, list[Any]] = {"oauth": ["Hello.", "Hello again."]}


@pytest.fixture(scope="module")
def protected() -> Iterator[str]:
    """The protected MCP server's URL, served by its own loop on a thread."""
    loop = asyncio.new_event_loop()
    ready: dict[str, str] = {}
    stop = asyncio.Event()

    async def serve() -> None:
        async with serve_protected() as (url, _provider):
            ready["url"] = url
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    for _ in range(500):
        if "url" in ready:
            break
        threading.Event().wait(0.02)
    yield ready["url"]
    loop.call_soon_threadsafe(stop.set)
    thread.join(10)


def extra_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The protected MCP server, signed in to with OAuth (see the browser conftest's
    ``jupyter``)."""
    url = request.getfixturevalue("protected")
    return {"mcpServers": {"docs": {"transport": "http", "url": url, "authProvider": "OAuth"}}}


def test_sign_in_button_round_trip(
    jupyter: JupyterServer, notebook: NotebookPage, protected: str
) -> None:
    jupyter.use_script("oauth")
    rel = f"oauth-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth hello", ""])
    notebook.open(rel)
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()
    answers = root.locator(".gth-msg-assistant .gth-msg-content")
    expect(answers.last).to_have_text("Hello.", timeout=STEP_MS)

    button = root.locator("a.gth-oauth-button")
    expect(button).to_have_count(1, timeout=STEP_MS)
    origin = protected.rsplit("/mcp", 1)[0]
    assert str(button.get_attribute("href")).startswith(origin)
    notebook.shot("sign in button")
    with notebook.page.context.expect_page() as opened:
        button.click()
    tab = opened.value
    tab.wait_for_load_state()
    expect(tab.locator("body")).to_contain_text("close this tab", timeout=STEP_MS)
    assert "/gth/oauth/callback" in tab.url
    tab.close()

    for _ in range(100):
        status = jupyter.api("GET", "gth/info")["mcp"]["servers"]["docs"]["status"]
        if status == "ok":
            break
        notebook.page.wait_for_timeout(100)
    assert status == "ok"
