"""The approvals matrix: every mode x no entry / allow / deny / escalate x shell / tool kinds.

Each cell runs the real middleware on a real tool call; only the two LangGraph touch points
(``interrupt`` and the resume check) are replaced, so "ask" is observed as the interrupt value.
The rater always answers "destructive", so an unlisted shell command asks at ``assisted`` and is
sent back to the agent at ``auto``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest

from gth_jupyter.config.schema import ApprovalEntry, ApprovalsConfig, CustomToolConfig
from gth_jupyter.middleware import approvals as approvals_module
from gth_jupyter.middleware.approvals import ApprovalsMiddleware
from gth_jupyter.middleware.rater import Rater, Rating
from gth_jupyter.models import FakeChatModel
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.fs.tools import make_filesystem_tools
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.shell import make_shell_tool

MODES = ("manual", "write", "assisted", "auto", "bypass")
LISTS = (None, "allow", "deny", "escalate")

#: subject -> mode -> (no entry, allow, deny, escalate)
EXPECTED: dict[str, dict[str, tuple[str, str, str, str]]] = {
    "shell": {
        "manual": ("ask", "run", "deny", "ask"),
        "write": ("ask", "run", "deny", "ask"),
        "assisted": ("ask", "run", "deny", "ask"),
        "auto": ("bounce", "run", "deny", "ask"),
        "bypass": ("run", "run", "deny", "run"),  # only deny survives bypass
    },
    # The lists come before the mode: a deny entry refuses at every mode, bypass included, and an
    # escalate entry asks at every mode but bypass, whether or not the mode gates the tool.
    "custom tool": {
        "manual": ("ask", "run", "deny", "ask"),
        "write": ("ask", "run", "deny", "ask"),
        "assisted": ("run", "run", "deny", "ask"),
        "auto": ("run", "run", "deny", "ask"),
        "bypass": ("run", "run", "deny", "run"),
    },
    "file write": {
        "manual": ("ask", "run", "deny", "ask"),
        "write": ("run", "run", "deny", "ask"),
        "assisted": ("run", "run", "deny", "ask"),
        "auto": ("run", "run", "deny", "ask"),
        "bypass": ("run", "run", "deny", "run"),
    },
    "file read": {
        **{mode: ("run", "run", "deny", "ask") for mode in MODES},
        "bypass": ("run", "run", "deny", "run"),
    },
}


class Asked(Exception):
    def __init__(self, value: dict[str, Any]) -> None:
        super().__init__("asked")
        self.value = value


class FixedRater(Rater):
    def __init__(self, verdict: str = "destructive") -> None:
        super().__init__(FakeChatModel(responses=[]))
        self.verdict = verdict
        self.calls: list[str] = []

    async def rate(self, command: str, *, cwd: str, justification: str | None = None) -> Rating:
        self.calls.append(command)
        return Rating(self.verdict, "it changes things")  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def outside_a_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_interrupt(value: dict[str, Any]) -> Any:
        raise Asked(value)

    monkeypatch.setattr(approvals_module, "interrupt", fake_interrupt)


def subject_tool(kind: str, cwd: Path) -> tuple[BaseTool, dict[str, Any]]:
    fs = {t.name: t for t in make_filesystem_tools("all", Workspace.at(cwd))}
    if kind == "shell":
        return make_shell_tool(cwd, {}), {"command": "npm test"}
    if kind == "custom tool":
        spec = CustomToolConfig(command="echo deploy", description="Deploy")
        return make_custom_tool("deploy", spec, cwd), {}
    if kind == "file write":
        return fs["write_file"], {"path": "a.txt", "content": "x"}
    return fs["read_file"], {"path": "a.txt"}


async def gate(
    middleware: ApprovalsMiddleware, tool: BaseTool, args: dict[str, Any]
) -> tuple[str, Any]:
    call: Any = {"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"}

    async def handler(request: ToolCallRequest) -> ToolMessage:
        return ToolMessage("ran", tool_call_id="call-1", name=tool.name)

    try:
        result = await middleware.awrap_tool_call(
            ToolCallRequest(tool_call=call, tool=tool, state={}, runtime=None),  # type: ignore[arg-type]
            handler,
        )
    except Asked as asked:
        return "ask", asked.value
    assert isinstance(result, ToolMessage)
    if result.content == "ran":
        return "run", result
    assert result.status == "error"
    if "deny rule" in str(result.content):
        return "deny", result
    if str(result.content).startswith("Not run: the auto-rater"):
        return "bounce", result
    return "refused", result


CELLS = [
    (subject, mode, lst, EXPECTED[subject][mode][LISTS.index(lst)])
    for subject in EXPECTED
    for mode in MODES
    for lst in LISTS
]


@pytest.mark.parametrize(("subject", "mode", "lst", "expected"), CELLS)
async def test_matrix(
    tmp_path: Path, subject: str, mode: str, lst: str | None, expected: str
) -> None:
    tool, args = subject_tool(subject, tmp_path)
    if subject == "shell":
        rule = ApprovalEntry(type="shell", matcher="exact", pattern="npm test")
    else:
        rule = ApprovalEntry(type="tool", matcher="exact", pattern=tool.name)
    config = ApprovalsConfig(mode=mode, **({lst: [rule]} if lst else {}))  # type: ignore[arg-type]
    rater = FixedRater()
    middleware = ApprovalsMiddleware(
        config, rater=rater, answers=True, command="notebook", cwd=str(tmp_path)
    )
    outcome, detail = await gate(middleware, tool, args)
    assert outcome == expected, detail
    # The rater is consulted only for an unlisted shell command at assisted and auto.
    rated = subject == "shell" and lst is None and mode in ("assisted", "auto")
    assert rater.calls == (["npm test"] if rated else [])
    if outcome == "ask":
        assert detail["type"] == "gth.approval" and detail["reason"] == "confirmation"
        assert detail["toolCallId"] == "call-1" and detail["toolName"] == tool.name
        assert detail["args"] == args
        assert detail["responseSchema"]["required"] == ["approved"]
        assert ("command" in detail) == (subject in ("shell", "custom tool"))
    if outcome == "deny":
        assert '"pattern": ' in detail.content


@pytest.mark.parametrize(
    ("mode", "lst", "expected"),
    [("manual", None, "refused"), ("assisted", "escalate", "refused"), ("bypass", None, "run")],
)
async def test_the_api_command_answers_no_approvals(
    tmp_path: Path, mode: str, lst: str | None, expected: str
) -> None:
    tool, args = subject_tool("shell", tmp_path)
    rule = ApprovalEntry(type="shell", matcher="exact", pattern="npm test")
    config = ApprovalsConfig(mode=mode, **({lst: [rule]} if lst else {}))  # type: ignore[arg-type]
    middleware = ApprovalsMiddleware(
        config, rater=FixedRater(), answers=False, command="api", cwd=str(tmp_path)
    )
    outcome, detail = await gate(middleware, tool, args)
    assert outcome == expected
    if expected == "refused":
        assert "nobody can answer approvals in the 'api' command" in detail.content


@pytest.mark.parametrize(
    ("verdict", "matcher", "expected"),
    [
        ("safe", None, "run"),
        ("catastrophic", None, "ask"),
        ("attack", None, "ask"),
        # An allow glob keeps the rater watching: only the two severe verdicts still ask.
        ("destructive", "glob", "run"),
        ("catastrophic", "glob", "ask"),
    ],
)
async def test_rater_verdicts_at_assisted(
    tmp_path: Path, verdict: str, matcher: str | None, expected: str
) -> None:
    tool, args = subject_tool("shell", tmp_path)
    allow = [ApprovalEntry(type="shell", matcher=matcher, pattern="npm *")] if matcher else None
    middleware = ApprovalsMiddleware(
        ApprovalsConfig(mode="assisted", allow=allow),
        rater=FixedRater(verdict),
        answers=True,
        command="notebook",
        cwd=str(tmp_path),
    )
    outcome, detail = await gate(middleware, tool, args)
    assert outcome == expected
    if outcome == "ask":
        assert detail["rating"] == {"verdict": verdict, "reason": "it changes things"}
        assert f"the auto-rater rated it {verdict}" in detail["message"]


async def test_auto_sends_a_destructive_command_back_a_few_times_then_asks(tmp_path: Path) -> None:
    tool, args = subject_tool("shell", tmp_path)
    middleware = ApprovalsMiddleware(
        ApprovalsConfig(mode="auto"),
        rater=FixedRater(),
        answers=True,
        command="notebook",
        cwd=str(tmp_path),
    )
    outcomes = [(await gate(middleware, tool, args))[0] for _ in range(4)]
    assert outcomes == ["bounce", "bounce", "bounce", "ask"]
    floored = {"command": "curl -fsSL https://registry.npmjs.ag/lodash"}
    assert (await gate(middleware, tool, floored))[0] == "ask"  # a named host asks at once


async def test_a_failing_rater_sends_the_command_to_the_person(tmp_path: Path) -> None:
    class Broken(FixedRater):
        async def rate(self, command: str, *, cwd: str, justification: str | None = None) -> Rating:
            rater = Rater(FakeChatModel(responses=["I think it is fine."]))
            return await rater.rate(command, cwd=cwd)

    tool, args = subject_tool("shell", tmp_path)
    middleware = ApprovalsMiddleware(
        ApprovalsConfig(mode="assisted"),
        rater=Broken(),
        answers=True,
        command="notebook",
        cwd=str(tmp_path),
    )
    outcome, detail = await gate(middleware, tool, args)
    assert outcome == "ask"
    assert "could not assess it: the rater did not answer with a JSON object" in detail["message"]


async def test_failing_custom_tool_validation_asks_at_every_mode(tmp_path: Path) -> None:
    spec = CustomToolConfig.model_validate(
        {"command": "echo ${v}", "description": "d", "parameters": {"v": {"description": "v"}}}
    )
    tool = make_custom_tool("echoer", spec, tmp_path)
    for mode in MODES:
        middleware = ApprovalsMiddleware(
            ApprovalsConfig(mode=mode),  # type: ignore[arg-type]
            rater=FixedRater(),
            answers=True,
            command="notebook",
            cwd=str(tmp_path),
        )
        outcome, detail = await gate(middleware, tool, {"v": "x; touch canary"})
        assert outcome == "ask", mode
        assert detail["command"] == "echo 'x; touch canary'"
        assert detail["validationError"].startswith("Shell injection attempts are not allowed")
        assert (await gate(middleware, tool, {"v": "fine"}))[0] == (
            "ask" if mode in ("manual", "write") else "run"
        )
