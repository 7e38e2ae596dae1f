"""What a headless ``%gth`` turn answers in place of a browser and a person.

The end-to-end runs (``test_headless.py``) show the notes in saved notebooks; here each kind of
pending interrupt gets its answer and note, and a refused call the allow entry that would let it
run.
"""

from __future__ import annotations

import json

from gth_jupyter.contract.pending import PendingInterrupt
from gth_jupyter.notebook.headless._answers import NO_PERSON, allow_hint, answer_pending


def test_a_browser_tool_gets_an_error_result_the_model_reads() -> None:
    photo = PendingInterrupt("i1", {}, "call-1", "capture_image", "client_tool")
    [entry], [note] = answer_pending([photo])
    assert entry.interrupt_id == "i1" and entry.status == "resolved"
    assert "no browser is attached" in json.loads(entry.payload)["error"]
    assert "capture_image" in json.loads(entry.payload)["error"]
    assert note.startswith("`capture_image` runs in the browser")


def test_an_approval_is_refused_with_why_it_asked_and_how_to_allow_it() -> None:
    value = {
        "toolName": "run_python",
        "code": "print(1)",
        "message": "The agent wants to run code (run_python): code runs in your kernel.",
    }
    [entry], [note] = answer_pending([PendingInterrupt("i2", value, "c", "run_python", "approval")])
    assert entry.status == "resolved"
    assert entry.payload == {"approved": False, "message": NO_PERSON}
    assert note.startswith("Refused without asking: `run_python` needs approval (code runs in")
    entry_json = '{"type": "tool", "matcher": "exact", "pattern": "run_python"}'
    assert f"add `{entry_json}` to `approvals.allow`" in note


def test_a_shell_command_is_allowed_by_its_exact_command() -> None:
    hint = allow_hint({"toolName": "shell", "command": "ls -la"})
    assert '{"type": "shell", "matcher": "exact", "pattern": "ls -la"}' in hint


def test_any_other_interrupt_is_cancelled() -> None:
    [entry], [note] = answer_pending([PendingInterrupt("i3", "a form")])
    assert entry.status == "cancelled" and entry.payload is None
    assert "cancelled" in note
