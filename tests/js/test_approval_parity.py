"""An approval as the widget answers it is the approval the server decodes.

The widget (``js/src/interrupts.js``, ``js/src/view/approval.js``) tells an approval's interrupt
from a client tool's by its ``reason`` and builds the ``resume`` entries a person's answer
becomes; the resume codec (``contract/resume.py``) reads them. Both take the reasons and the
answer's shape from ``contract/spec/approvals.json``; here every answer the widget can send,
with hostile edits, goes through the codec, and the server's interrupts through the widget.
"""

from __future__ import annotations

from typing import Any

import jsonschema

from gth_jupyter.agui.mapping import to_interrupt
from gth_jupyter.contract.pending import (
    APPROVAL_INTERRUPT,
    APPROVAL_REASON,
    CLIENT_TOOL_INTERRUPT,
    PendingInterrupt,
)
from gth_jupyter.contract.resume import (
    APPROVAL_RESPONSE_SCHEMA,
    ApprovalAnswer,
    resume_from_entries,
)
from tests.node import run_js

#: What a person may type as edited arguments: objects (deep, odd keys, huge numbers) and text
#: the widget refuses (not JSON, not an object).
EDITS = [
    '{"code": "print(1)"}',
    '  {"code": "import os\\nos.remove(\\"x\\")", "justification": "\\u001b]8;;https://e\\u0007"}',
    '{"__proto__": {"polluted": true}, "constructor": {"prototype": {}}}',
    '{"nested": {"deep": [1, {"x": null}]}, "n": 1e308, "": ""}',
    '{"approved": false, "grant": "session"}',
    "[1, 2]",
    '"rm -rf /"',
    "null",
    "42",
    "{bad json",
    "",
]
ANSWERS = """
const i = await import("./src/interrupts.js");
const { approveAlways } = await import("./src/view/approval.js");
const edits = input.map((text) => {
  const parsed = i.parseEditedArgs(text);
  return parsed.ok ? { sent: i.approveEdited("a1", parsed.value) } : { refused: parsed.error };
});
output({
  approve: i.approve("a1"), reject: i.reject("a1"), cancel: i.cancel("a1"),
  thread: approveAlways("a1", "thread"), session: approveAlways("a1", "session"), edits,
  reasons: [i.APPROVAL_REASON, i.CLIENT_TOOL_REASON],
});
"""
READS = """
const i = await import("./src/interrupts.js");
output(input.map((it) => ({ approval: i.isApproval(it), blocks: i.blocksThread([it]),
  details: i.isApproval(it) ? i.approvalDetails(it) : null })));
"""
PENDING = PendingInterrupt.of("a1", {"type": APPROVAL_INTERRUPT, "toolName": "run_python"})


def _decoded(entry: dict[str, Any]) -> ApprovalAnswer:
    """What the gate reads from one of the widget's resume entries."""
    if "payload" in entry:
        jsonschema.validate(entry["payload"], APPROVAL_RESPONSE_SCHEMA)
    resume, unknown = resume_from_entries(
        [(entry["interruptId"], entry["status"], entry.get("payload"))], "t1", [PENDING]
    )
    assert unknown == []
    return ApprovalAnswer.from_resume_value(resume.values["a1"])


def test_every_answer_the_widget_sends_is_the_decision_the_gate_reads() -> None:
    widget = run_js(ANSWERS, EDITS)
    assert widget["reasons"] == [APPROVAL_REASON, "tool_call"]
    assert _decoded(widget["approve"]) == ApprovalAnswer(True)
    assert _decoded(widget["reject"]) == ApprovalAnswer(False)
    assert _decoded(widget["cancel"]) == ApprovalAnswer(False)
    assert _decoded(widget["thread"]) == ApprovalAnswer(True, grant="thread")
    assert _decoded(widget["session"]) == ApprovalAnswer(True, grant="session")
    sent = [e["sent"] for e in widget["edits"] if "sent" in e]
    assert len(sent) == 5 and all("refused" in e for e in widget["edits"][5:])
    for entry in sent:
        answer = _decoded(entry)
        assert answer.approved and answer.grant is None
        assert answer.edited_args == entry["payload"]["editedArgs"]


def test_an_edit_the_widget_would_refuse_runs_nothing() -> None:
    """The stricter side won: the widget sends an object or no edit at all, so an approval whose
    ``editedArgs`` is anything else is unreadable, a rejection (it ran the original call)."""
    for edited in ([1, 2], "rm -rf /", 42, True):
        answer = ApprovalAnswer.from_resume_value({"approved": True, "editedArgs": edited})
        assert answer == ApprovalAnswer(False), edited
    assert ApprovalAnswer.from_resume_value({"approved": True, "editedArgs": None}).approved


def _interrupt(value: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = to_interrupt(PendingInterrupt.of("i1", value)).model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    return dumped


def test_the_widget_reads_the_gates_interrupts_as_the_gate_raised_them() -> None:
    values: list[Any] = [
        {
            "type": APPROVAL_INTERRUPT,
            "reason": APPROVAL_REASON,
            "message": "The agent wants to run code: \x1b]8;;https://e\x07x.",
            "toolCallId": "c1",
            "toolName": "run_python",
            "args": {"code": "print(1)", "__proto__": {"x": 1}},
            "command": "print(1)",
            "rating": {"verdict": "ask", "reason": "writes files"},
            "validationError": "code is required",
            "responseSchema": APPROVAL_RESPONSE_SCHEMA,
        },
        {"type": APPROVAL_INTERRUPT, "reason": APPROVAL_REASON, "toolName": "shell", "args": []},
        {"type": CLIENT_TOOL_INTERRUPT, "name": "capture_image", "toolCallId": "c2", "args": {}},
        "a bare interrupt",
    ]
    read = run_js(READS, [_interrupt(v) for v in values])
    assert [r["approval"] for r in read] == [True, True, False, False]
    assert [r["blocks"] for r in read] == [True, True, False, True]
    full = read[0]["details"]
    assert full == {k: values[0][k] for k in ("toolName", "args", "command", "rating")} | {
        "validationError": "code is required"
    }
    assert read[1]["details"] == {"toolName": "shell", "args": []}
