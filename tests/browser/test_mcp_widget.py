"""MCP servers in a real JupyterLab 4 and Notebook 7, headless Chromium: a tool of a stdio MCP
server (written with the ``mcp`` SDK) called from a ``%gth`` cell shows as a tool card with its
result, and a server that cannot start is said in the chat as a notice."""

from __future__ import annotations

import sys
from pathlib import Path
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

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed"),
    pytest.mark.timeout(150),
]

SERVER = Path(__file__).resolve().parents[1] / "tools" / "mcp_server.py"
ADD = {"name": "mcp__calc__add", "args": {"a": 20, "b": 22}}
SCRIPTS: dict[str, list[Any]] = {"mcp": [{"toolCalls": [ADD]}, "It is 42."]}


# One working stdio MCP server and one that cannot start, beside the scripted model.
EXTRA_CONFIG = {
    "mcpServers": {
        "calc": {"transport": "stdio", "command": sys.executable, "args": [str(SERVER)]},
        "broken": {"transport": "stdio", "command": "/nonexistent/mcp-server"},
    },
}


def test_an_mcp_tool_card_and_a_notice_for_the_server_that_failed(
    jupyter: JupyterServer, notebook: NotebookPage
) -> None:
    jupyter.use_script("mcp")
    rel = f"mcp-{jupyter.app}.ipynb"
    write_notebook(jupyter.root / rel, ["%load_ext gth_jupyter", "%gth add 20 and 22", ""])
    notebook.open(rel)
    notebook.run_cells(0, 1)
    root = notebook.ready_widget()

    card = root.locator(".gth-tool[data-tool-name=mcp__calc__add]")
    expect(card).to_have_attribute("data-status", "done", timeout=STEP_MS)
    expect(card).to_contain_text("42")
    answers = root.locator(".gth-msg-assistant .gth-msg-content")
    expect(answers.last).to_have_text("It is 42.", timeout=STEP_MS)
    notice = root.locator(".gth-note-warning", has_text="broken")
    expect(notice).to_have_count(1, timeout=STEP_MS)
    notebook.shot("mcp tool card")
    servers = jupyter.api("GET", "gth/info")["mcp"]["servers"]
    assert servers["calc"]["status"] == "ok" and servers["broken"]["status"] == "error"
