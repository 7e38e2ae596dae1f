"""Approvals on a real graph: interrupt, then resume with approve / edit / reject / cancel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.agui.mapping import to_interrupt
from gth_jupyter.config.schema import ApprovalEntry, ApprovalsConfig, CustomToolConfig
from gth_jupyter.contract.events import ToolOutputEvent, ToolResultEvent
from gth_jupyter.contract.pending import PendingInterrupt
from gth_jupyter.contract.resume import Resume
from gth_jupyter.contract.run import RunContext, RunEnd, RunPlan
from gth_jupyter.middleware.approvals import ApprovalsMiddleware
from gth_jupyter.middleware.rater import Rater
from gth_jupyter.models import FakeChatModel
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.shell import make_shell_tool


class Flow:
    """One thread: a scripted model calls ``name`` once; answers resume it."""

    def __init__(
        self,
        tools: list[BaseTool],
        middleware: ApprovalsMiddleware,
        name: str,
        args: dict[str, Any],
    ) -> None:
        model = FakeChatModel(
            responses=[{"toolCalls": [{"name": name, "args": args, "id": "call-1"}]}, "done"]
        )
        self.graph = create_agent(
            model, tools, middleware=[middleware], checkpointer=InMemorySaver()
        )
        self.config: Any = {"configurable": {"thread_id": "t1"}}
        self.streamed: list[Any] = []

    async def _run(self, payload: Any, context: RunContext | None = None) -> None:
        async for mode, data in self.graph.astream(
            payload, self.config, stream_mode=["messages", "updates"], context=context
        ):
            if mode == "messages":
                self.streamed.append(data[0])

    async def start(self) -> Any:
        await self._run({"messages": [HumanMessage("go")]})
        state = await self.graph.aget_state(self.config)
        return state.interrupts

    async def answer(self, value: Any) -> ToolMessage:
        (pending,) = (await self.graph.aget_state(self.config)).interrupts
        # As a host does: the run context names the call whose answer is waiting.
        answering = RunContext(answering=frozenset({pending.value["toolCallId"]}))
        await self._run(Command(resume={pending.id: value}), answering)
        state = await self.graph.aget_state(self.config)
        assert not state.interrupts
        (message,) = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
        return message


def gate(mode: str, **extra: Any) -> ApprovalsMiddleware:
    rater = extra.pop("rater", None)
    return ApprovalsMiddleware(
        ApprovalsConfig(mode=mode, **extra),  # type: ignore[arg-type]
        rater=rater,
        answers=True,
        command="notebook",
        cwd="/work",
    )


async def test_approve_runs_the_command(tmp_path: Path) -> None:
    flow = Flow(
        [make_shell_tool(tmp_path, {})], gate("manual"), "run_shell_command", {"command": "echo hi"}
    )
    (pending,) = await flow.start()
    assert pending.value["message"] == (
        "The agent wants to run `echo hi` (run_shell_command): approvals mode 'manual' asks you "
        "before every shell command."
    )
    assert pending.value["command"] == "echo hi"
    message = await flow.answer({"approved": True})
    assert (
        message.status == "success"
        and "Command 'echo hi' completed successfully" in message.content
    )


async def test_the_interrupt_maps_to_an_ag_ui_confirmation(tmp_path: Path) -> None:
    flow = Flow(
        [make_shell_tool(tmp_path, {})], gate("write"), "run_shell_command", {"command": "ls"}
    )
    (pending,) = await flow.start()
    mapped = to_interrupt(PendingInterrupt.of(pending.id, pending.value))
    assert mapped.reason == "confirmation"
    assert mapped.tool_call_id == "call-1"
    assert mapped.response_schema is not None
    assert mapped.response_schema["properties"]["editedArgs"] == {"type": "object"}


async def test_edit_runs_the_edited_call_and_tells_the_model(tmp_path: Path) -> None:
    flow = Flow(
        [make_shell_tool(tmp_path, {})], gate("manual"), "run_shell_command", {"command": "echo a"}
    )
    await flow.start()
    message = await flow.answer({"approved": True, "editedArgs": {"command": "echo edited"}})
    assert message.content.startswith(
        'Note: the user edited this call before it ran; it ran with the arguments {"command": '
        '"echo edited"}, not the ones you sent.'
    )
    assert "<COMMAND_OUTPUT>\nedited\n</COMMAND_OUTPUT>" in message.content


async def test_an_edit_into_a_denied_command_is_still_refused(tmp_path: Path) -> None:
    deny = [ApprovalEntry(type="shell", matcher="glob", pattern="rm *")]
    flow = Flow(
        [make_shell_tool(tmp_path, {})],
        gate("manual", deny=deny),
        "run_shell_command",
        {"command": "ls"},
    )
    await flow.start()
    message = await flow.answer({"approved": True, "editedArgs": {"command": "rm -r src"}})
    assert message.status == "error" and "deny rule" in message.content


async def test_reject_and_cancel_become_error_results_the_model_can_act_on(tmp_path: Path) -> None:
    for answer, said in [
        ({"approved": False, "message": "not now"}, " The user said: not now"),
        ({"status": "cancelled"}, ""),
        ({"type": "reject"}, ""),
        ("yes please", ""),  # an unreadable answer never runs anything
    ]:
        flow = Flow(
            [make_shell_tool(tmp_path, {})],
            gate("manual"),
            "run_shell_command",
            {"command": "touch made"},
        )
        await flow.start()
        message = await flow.answer(answer)
        assert message.status == "error"
        assert message.content == (
            f"The user rejected the run_shell_command call; it did not run.{said} Do not retry it "
            "unless the user asks; try another way or ask the user."
        )
        assert not (tmp_path / "made").exists()


async def test_a_failed_validation_runs_once_when_approved(tmp_path: Path) -> None:
    spec = CustomToolConfig.model_validate(
        {
            "command": "touch ${name}",
            "description": "d",
            "parameters": {"name": {"description": "n"}},
        }
    )
    tool = make_custom_tool("maker", spec, tmp_path)
    flow = Flow([tool], gate("bypass"), "maker", {"name": "a; touch approved"})
    (pending,) = await flow.start()
    assert pending.value["command"] == "touch 'a; touch approved'"
    assert "its arguments failed validation (Shell injection attempts" in pending.value["message"]
    message = await flow.answer({"type": "approve"})
    # Approved, it runs unvalidated but still as one argument: a file of that name, no injection.
    assert (tmp_path / "a; touch approved").exists() and not (tmp_path / "approved").exists()
    assert "completed successfully" in message.content

    flow = Flow([tool], gate("assisted"), "maker", {"name": "b; touch rejected"})
    await flow.start()
    message = await flow.answer({"approved": False})
    assert message.status == "error"
    assert message.content.startswith(
        "Execution of 'maker' was rejected by user. Validation error: Shell injection attempts"
    )
    assert not (tmp_path / "rejected").exists()


async def test_the_rater_is_asked_once_and_never_streams(tmp_path: Path) -> None:
    judge = FakeChatModel(
        responses=[
            '{"verdict": "destructive", "reason": "deletes the build"}',
            '{"verdict": "safe"}',
        ]
    )
    flow = Flow(
        [make_shell_tool(tmp_path, {})],
        gate("assisted", rater=Rater(judge)),
        "run_shell_command",
        {"command": "rm -r build", "justification": "clean build"},
    )
    (pending,) = await flow.start()
    assert pending.value["rating"] == {"verdict": "destructive", "reason": "deletes the build"}
    message = await flow.answer({"approved": True})
    assert message.status in ("success", "error")  # rm of a missing dir fails: it did run
    assert "Executing 'rm -r build'" in message.content
    assert len(judge.received) == 1  # not asked again on resume
    assert "clean build" in str(judge.received[0][-1].content)
    rater_text = [
        m for m in flow.streamed if isinstance(m, AIMessageChunk) and "verdict" in str(m.content)
    ]
    assert rater_text == []


async def test_through_the_runtime_an_approval_pauses_the_run_and_output_streams_live(
    tmp_path: Path,
) -> None:
    model = FakeChatModel(
        responses=[
            {"toolCalls": [{"name": "run_shell_command", "args": {"command": "echo live"}}]},
            "ok",
        ]
    )
    runtime = Runtime(
        model,
        [make_shell_tool(tmp_path, {})],
        checkpointer=InMemorySaver(),
        middleware=[gate("manual")],
    )
    first = [i async for i in runtime.stream(RunPlan("t", messages=[HumanMessage("go")]))]
    end = first[-1]
    assert isinstance(end, RunEnd)
    (pending,) = end.pending
    assert not pending.client_tool and pending.tool_call_id
    assert pending.value["type"] == "gth.approval"
    call_id = pending.tool_call_id
    resumed = [
        i
        async for i in runtime.stream(
            RunPlan("t", resume=Resume({pending.id: {"approved": True}}, frozenset({call_id})))
        )
    ]
    chunks = [i.chunk for i in resumed if isinstance(i, ToolOutputEvent) and not i.is_notice]
    assert chunks == ["live\n"]
    (result,) = [i for i in resumed if isinstance(i, ToolResultEvent)]
    assert result.id == pending.tool_call_id and "completed successfully" in result.content


async def test_a_resume_that_does_not_answer_the_call_asks_the_rater_again(tmp_path: Path) -> None:
    """Only the run that carries the person's answer skips the rater: the codec names the call."""
    judge = FakeChatModel(
        responses=['{"verdict": "destructive", "reason": "a"}', '{"verdict": "destructive"}']
    )
    flow = Flow(
        [make_shell_tool(tmp_path, {})],
        gate("assisted", rater=Rater(judge)),
        "run_shell_command",
        {"command": "rm -r build"},
    )
    (pending,) = await flow.start()
    await flow._run(Command(resume={pending.id: {"approved": True}}), RunContext())
    assert len(judge.received) == 2
