"""In a real kernel: a %gth prompt ending in "?" reaches the agent, and obj? is still help."""

from __future__ import annotations

from typing import Any

from tests.notebook.conftest import run_in_kernel


def test_the_quickstart_prompt_reaches_the_magic_and_help_still_works(kernel: Any) -> None:
    reply, _ = run_in_kernel(kernel, "%load_ext gth_jupyter")
    assert reply["status"] == "ok"
    reply, printed = run_in_kernel(
        kernel, "w = %gth Hello! What can you do?\nprint(repr(w.pending_prompt))"
    )
    assert reply["status"] == "ok", reply
    assert printed.strip() == "'Hello! What can you do?'"
    assert "not found" not in printed
    reply, _ = run_in_kernel(kernel, "answer = 42\nanswer?")
    pages = [p for p in reply.get("payload", []) if p.get("source") == "page"]
    assert reply["status"] == "ok" and pages
    assert "int" in pages[0]["data"]["text/plain"]
