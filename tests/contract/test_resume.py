"""The resume codec: every shape a client answers in, decoded in one place."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.contract.errors import InterruptMismatchError, NoPendingInterruptError
from gth_jupyter.contract.pending import APPROVAL_INTERRUPT, CLIENT_TOOL_INTERRUPT, PendingInterrupt
from gth_jupyter.contract.resume import (
    ApprovalAnswer,
    ClientToolAnswer,
    ToolResult,
    forwarded_command,
    resume_from_command,
    resume_from_entries,
    resume_from_tool_results,
)

CAMERA = PendingInterrupt.of(
    "i-cam", {"type": CLIENT_TOOL_INTERRUPT, "name": "capture_image", "toolCallId": "call-cam"}
)
SHELL = PendingInterrupt.of(
    "i-sh", {"type": APPROVAL_INTERRUPT, "toolName": "run_shell_command", "toolCallId": "call-sh"}
)
OTHER = PendingInterrupt.of("i-x", "Pick a colour")


def test_pending_interrupts_say_what_they_are() -> None:
    assert (CAMERA.kind, CAMERA.tool_name, CAMERA.tool_call_id) == (
        "client_tool",
        "capture_image",
        "call-cam",
    )
    assert CAMERA.client_tool and not SHELL.client_tool
    assert (SHELL.kind, SHELL.tool_name, SHELL.tool_call_id) == (
        "approval",
        "run_shell_command",
        "call-sh",
    )
    assert (OTHER.kind, OTHER.tool_call_id) == ("other", None)


def test_resume_entries_answer_by_interrupt_id_or_by_tool_call_id() -> None:
    resume, unknown = resume_from_entries(
        [("call-cam", "resolved", {"mimeType": "image/jpeg", "data": "QQ=="}), ("nope", "x", 1)],
        "t",
        [CAMERA, SHELL],
    )
    assert unknown == ["nope"]
    assert resume.tool_call_ids == {"call-cam"}
    answer = ClientToolAnswer.from_resume_value(resume.values["i-cam"])
    assert answer.payload == {"mimeType": "image/jpeg", "data": "QQ=="} and not answer.is_error


def test_a_cancelled_entry_cancels_by_kind() -> None:
    resume, _ = resume_from_entries(
        [
            ("i-cam", "cancelled", None),
            ("i-sh", "cancelled", {"approved": True}),
            ("i-x", "cancelled", 1),
        ],
        "t",
        [CAMERA, SHELL, OTHER],
    )
    assert ClientToolAnswer.from_resume_value(resume.values["i-cam"]).status == "cancelled"
    assert ApprovalAnswer.from_resume_value(resume.values["i-sh"]) == ApprovalAnswer(False)
    assert resume.values["i-x"] == {"status": "cancelled"}
    assert resume.tool_call_ids == {"call-cam", "call-sh"}


def test_entries_that_match_nothing_are_refused_with_what_is_pending() -> None:
    with pytest.raises(InterruptMismatchError) as info:
        resume_from_entries([("ghost", "resolved", 1)], "t", [CAMERA])
    assert info.value.code == "interrupt_mismatch"
    assert info.value.detail == {
        "pending": [
            {
                "interruptId": "i-cam",
                "clientTool": True,
                "toolCallId": "call-cam",
                "toolName": "capture_image",
            }
        ]
    }
    with pytest.raises(NoPendingInterruptError):
        resume_from_entries([("i-cam", "resolved", 1)], "t", [])


def test_gaunt_sloths_command_answers_the_named_or_only_interrupt() -> None:
    props = {"command": {"resume": "blue", "interruptEvent": {"toolCallId": "call-cam"}}}
    command = forwarded_command(props)
    assert command is not None
    resume = resume_from_command(command, "t", [SHELL, CAMERA])
    assert ClientToolAnswer.from_resume_value(resume.values["i-cam"]).payload == "blue"
    only = resume_from_command({"resume": {"type": "approve"}}, "t", [SHELL])
    assert only.values == {"i-sh": {"approved": True}} and only.tool_call_ids == {"call-sh"}
    with pytest.raises(InterruptMismatchError, match="2 interrupts are pending"):
        resume_from_command({"resume": 1}, "t", [SHELL, CAMERA])
    with pytest.raises(InterruptMismatchError, match="'call-zz', which is not pending"):
        resume_from_command(
            {"resume": 1, "interruptEvent": {"toolCallId": "call-zz"}}, "t", [SHELL]
        )
    assert forwarded_command({"command": {"goto": "x"}}) is None
    assert forwarded_command("not a dict") is None


def test_trailing_tool_messages_answer_only_pending_client_calls() -> None:
    results = [
        ToolResult("call-cam", '{"error": "denied"}', is_error=True, message_id="m1"),
        ToolResult("call-sh", "ran it myself"),  # an approval is never answered by a result
    ]
    resume = resume_from_tool_results(results, [CAMERA, SHELL])
    assert resume is not None and list(resume.values) == ["i-cam"]
    answer = ClientToolAnswer.from_resume_value(resume.values["i-cam"])
    assert (
        answer.is_error and answer.message_id == "m1" and answer.content() == '{"error": "denied"}'
    )
    assert resume_from_tool_results([ToolResult("ghost", "x")], [CAMERA]) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, ApprovalAnswer(True)),
        ({"approved": True}, ApprovalAnswer(True)),
        (
            {"approved": True, "editedArgs": {"command": "ls"}},
            ApprovalAnswer(True, {"command": "ls"}),
        ),
        (
            {"approved": False, "editedArgs": {"command": "ls"}, "message": " no "},
            ApprovalAnswer(False, None, "no"),
        ),
        ({"approved": "yes"}, ApprovalAnswer(False)),
        ({"type": "approve"}, ApprovalAnswer(True)),
        ({"type": "edit", "edited_action": {"args": {"a": 1}}}, ApprovalAnswer(True, {"a": 1})),
        ({"type": "edit", "editedAction": {"args": "bad"}}, ApprovalAnswer(False)),
        ({"type": "reject", "message": "later"}, ApprovalAnswer(False, None, "later")),
        ({"status": "cancelled"}, ApprovalAnswer(False)),
        ("yes please", ApprovalAnswer(False)),
        (None, ApprovalAnswer(False)),
    ],
)
def test_every_approval_shape_decodes_and_what_is_unreadable_rejects(
    value: Any, expected: ApprovalAnswer
) -> None:
    decoded = ApprovalAnswer.from_resume_value(value)
    assert decoded == expected
    assert ApprovalAnswer.from_resume_value(decoded.to_resume_value()) == decoded


def test_client_tool_answers_round_trip_and_raw_values_are_results() -> None:
    answer = ClientToolAnswer("resolved", [1, 2], True, "m9")
    assert ClientToolAnswer.from_resume_value(answer.to_resume_value()) == answer
    assert ClientToolAnswer.from_resume_value("plain text") == ClientToolAnswer(
        payload="plain text"
    )
    assert ClientToolAnswer(payload={"a": "é"}).content() == '{"a": "é"}'
