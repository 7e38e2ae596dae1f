"""MCP OAuth in a real JupyterLab 4 and Notebook 7, headless Chromium: a server that needs the
person to sign in shows a Sign in button in the chat; the click opens its authorization page in a
new tab, which comes back to ``{base_url}gth/oauth/callback`` with the login cookie, and the
server is connected. The authorization server and the protected MCP server run on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import browser_harness
import pytest
from browser_harness import (
    APPS,
    ARTIFACTS,
    CHROMIUM,
    STEP_MS,
    JupyterServer,
    NotebookPage,
    fake_config,
    slug,
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


@pytest.fixture(scope="module", params=APPS)
def jupyter(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    chromium: Any,
    protected: str,
) -> Iterator[JupyterServer]:
    def write_oauth_config(folder: Path, responses: Any, record_path: Path) -> None:
        config = {
            **fake_config(responses, record_path),
            "mcpServers": {
                "docs": {"transport": "http", "url": protected, "authProvider": "OAuth"}
            },
        }
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".gsloth.config.json").write_text(json.dumps(config, indent=1), "utf-8")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(browser_harness, "write_config", write_oauth_config)
        server = JupyterServer(
            request.param, tmp_path_factory.mktemp(f"oauth-{request.param}"), SCRIPTS
        )
        try:
            yield server
        finally:
            server.stop()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                name = f"{slug(__name__)}-{request.param}-server.log"
                (ARTIFACTS / name).write_text(server.log_tail(2_000_000))


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
