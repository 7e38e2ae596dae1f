"""Standing approvals ("Always allow this…"): the store, and the gate using it on a real graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from gth_jupyter.config.schema import ApprovalEntry, ApprovalsConfig, CustomToolConfig
from gth_jupyter.contract.resume import ApprovalAnswer
from gth_jupyter.contract.run import RunContext
from gth_jupyter.middleware.approval_rules import Subject
from gth_jupyter.middleware.approvals import ApprovalsMiddleware
from gth_jupyter.middleware.grants import GrantStore, grant_key
from gth_jupyter.models import FakeChatModel
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.shell import make_shell_tool


def shell(command: str, call_id: str) -> dict[str, Any]:
    return {
        "toolCalls": [{"name": "run_shell_command", "args": {"command": command}, "id": call_id}]
    }


class Chat:
    """One gate and one graph; each turn the scripted model calls one command, then says done."""

    def __init__(self, tmp_path: Path, commands: list[str], **approvals: Any) -> None:
        responses: list[Any] = []
        for n, command in enumerate(commands):
            responses += [shell(command, f"call-{n}"), "done"]
        self.gate = ApprovalsMiddleware(
            ApprovalsConfig(mode="manual", **approvals),
            rater=None,
            answers=True,
            command="notebook",
            cwd=str(tmp_path),
        )
        self.graph = create_agent(
            FakeChatModel(responses=responses),
            [make_shell_tool(tmp_path, {})],
            middleware=[self.gate],
            checkpointer=InMemorySaver(),
        )

    @staticmethod
    def config(thread: str) -> Any:
        return {"configurable": {"thread_id": thread}}

    async def turn(self, thread: str) -> list[Any]:
        """A user turn; the interrupts it stopped on (none: the call ran)."""
        await self.graph.ainvoke({"messages": [HumanMessage("go")]}, self.config(thread))
        return list((await self.graph.aget_state(self.config(thread))).interrupts)

    async def answer(self, thread: str, value: Any) -> None:
        (pending,) = (await self.graph.aget_state(self.config(thread))).interrupts
        context = RunContext(answering=frozenset({pending.value["toolCallId"]}))
        await self.graph.ainvoke(
            Command(resume={pending.id: value}), self.config(thread), context=context
        )

    async def last_result(self, thread: str) -> ToolMessage:
        state = await self.graph.aget_state(self.config(thread))
        return [m for m in state.values["messages"] if isinstance(m, ToolMessage)][-1]


# -- the store --------------------------------------------------------------------------------


def test_keys_are_exact_per_command_or_code_and_per_tool_otherwise() -> None:
    assert grant_key(Subject("shell", "run_shell_command", command="ls   -l"), "shell") == (
        "shell",
        "ls   -l",  # exact: not even whitespace is folded
    )
    code = Subject("tool", "run_python", command="print(1)")
    assert grant_key(code, "code") == ("code", "print(1)")
    assert grant_key(Subject("tool", "web_fetch", host="example.com"), "network") == (
        "tool",
        "web_fetch",
    )
    assert grant_key(Subject("mcpTool", "search", server="docs"), "mcp") == (
        "mcpTool",
        "docs",
        "search",
    )


def test_thread_grants_stay_in_their_thread_and_session_grants_cover_all() -> None:
    store = GrantStore()
    mine = store.add("thread", "t1", ("shell", "ls"), "run_shell_command")
    everyone = store.add("session", "t1", ("tool", "web_fetch"), "web_fetch")
    assert store.match("t1", ("shell", "ls")) == mine
    assert store.match("t2", ("shell", "ls")) is None
    assert store.match("t2", ("tool", "web_fetch")) == everyone
    assert store.match("t1", ("shell", "ls -l")) is None  # another command still asks
    assert [g.id for g in store.for_thread("t1")] == [mine.id, everyone.id]
    assert [g.id for g in store.for_thread("t2")] == [everyone.id]
    assert everyone.thread_id is None
    listed = mine.to_json()
    assert listed["scope"] == "thread" and listed["kind"] == "shell" and listed["label"] == "ls"
    assert set(listed) == {"id", "scope", "kind", "label", "createdAt"}


def test_the_same_grant_twice_is_kept_once_and_revoke_forgets_it() -> None:
    store = GrantStore()
    first = store.add("thread", "t1", ("shell", "ls"))
    assert store.add("thread", "t1", ("shell", "ls")) == first
    assert len(store) == 1
    assert store.revoke(first.id) is True
    assert store.revoke(first.id) is False
    assert store.match("t1", ("shell", "ls")) is None


def test_the_store_is_bounded_and_drops_the_oldest() -> None:
    store = GrantStore(limit=3)
    grants = [store.add("session", None, ("shell", f"echo {n}")) for n in range(5)]
    assert len(store) == 3
    assert store.match(None, ("shell", "echo 0")) is None
    assert store.match(None, ("shell", "echo 4")) == grants[4]


def test_code_labels_show_the_tool_and_first_line() -> None:
    store = GrantStore()
    grant = store.add("session", None, ("code", "\nimport os\nprint(os.getcwd())"), "run_python")
    assert grant.label == "run_python: import os …"


def test_the_answer_reads_a_grant_only_with_an_approval() -> None:
    assert ApprovalAnswer.from_resume_value({"approved": True, "grant": "thread"}).grant == (
        "thread"
    )
    assert ApprovalAnswer.from_resume_value({"approved": False, "grant": "thread"}).grant is None
    assert ApprovalAnswer.from_resume_value({"approved": True, "grant": "forever"}).grant is None
    value = ApprovalAnswer(True, grant="session").to_resume_value()
    assert value == {"approved": True, "grant": "session"}


# -- the gate ---------------------------------------------------------------------------------


async def test_always_allow_for_the_thread_runs_the_same_command_again_without_asking(
    tmp_path: Path,
) -> None:
    chat = Chat(tmp_path, ["echo hi", "echo hi", "echo  hi"])
    assert len(await chat.turn("t1")) == 1
    await chat.answer("t1", {"approved": True, "grant": "thread"})
    assert "completed successfully" in (await chat.last_result("t1")).content
    (grant,) = chat.gate.grants.for_thread("t1")
    assert grant.scope == "thread" and grant.key == ("shell", "echo hi")
    # The same command runs at once.
    assert await chat.turn("t1") == []
    result = await chat.last_result("t1")
    assert result.tool_call_id == "call-1" and result.status == "success"
    # Any other string, even one differing only in whitespace, still asks.
    assert len(await chat.turn("t1")) == 1


async def test_a_thread_grant_does_not_reach_another_thread_but_a_session_grant_does(
    tmp_path: Path,
) -> None:
    chat = Chat(tmp_path, ["echo hi", "echo hi", "echo hi", "echo hi"])
    assert len(await chat.turn("t1")) == 1
    await chat.answer("t1", {"approved": True, "grant": "thread"})
    assert len(await chat.turn("t2")) == 1  # another thread: asked
    await chat.answer("t2", {"approved": True, "grant": "session"})
    assert await chat.turn("t3") == []  # the session grant covers every thread
    assert (await chat.last_result("t3")).status == "success"
    assert {g.scope for g in chat.gate.grants.for_thread("t1")} == {"thread", "session"}
    assert [g.scope for g in chat.gate.grants.for_thread("t3")] == ["session"]


async def test_a_plain_approval_grants_nothing_and_a_revoked_grant_asks_again(
    tmp_path: Path,
) -> None:
    chat = Chat(tmp_path, ["echo hi", "echo hi", "echo hi"])
    await chat.turn("t1")
    await chat.answer("t1", {"approved": True})
    assert len(chat.gate.grants) == 0
    assert len(await chat.turn("t1")) == 1
    await chat.answer("t1", {"approved": True, "grant": "session"})
    (grant,) = chat.gate.grants.for_thread("t1")
    assert chat.gate.grants.revoke(grant.id)
    assert len(await chat.turn("t1")) == 1


async def test_deny_still_wins_over_a_grant(tmp_path: Path) -> None:
    deny = [ApprovalEntry(type="shell", matcher="glob", pattern="rm *")]
    chat = Chat(tmp_path, ["rm -r src"], deny=deny)
    chat.gate.grants.add("session", None, ("shell", "rm -r src"))
    assert await chat.turn("t1") == []
    result = await chat.last_result("t1")
    assert result.status == "error" and "deny rule" in result.content


async def test_an_escalate_rule_still_asks_despite_a_grant(tmp_path: Path) -> None:
    escalate = [ApprovalEntry(type="shell", matcher="glob", pattern="git push*")]
    chat = Chat(tmp_path, ["git push origin"], escalate=escalate)
    chat.gate.grants.add("session", None, ("shell", "git push origin"))
    (pending,) = await chat.turn("t1")
    assert "escalate rule" in pending.value["message"]


async def test_an_edited_approval_grants_what_ran(tmp_path: Path) -> None:
    chat = Chat(tmp_path, ["echo a", "echo b"])
    await chat.turn("t1")
    await chat.answer(
        "t1", {"approved": True, "editedArgs": {"command": "echo b"}, "grant": "thread"}
    )
    (grant,) = chat.gate.grants.for_thread("t1")
    assert grant.key == ("shell", "echo b")
    assert await chat.turn("t1") == []


async def test_a_grant_never_covers_a_call_whose_arguments_fail_validation(tmp_path: Path) -> None:
    spec = CustomToolConfig.model_validate(
        {
            "command": "touch ${name}",
            "description": "d",
            "parameters": {"name": {"description": "n"}},
        }
    )
    calls = [
        {"toolCalls": [{"name": "maker", "args": {"name": "ok"}, "id": "c1"}]},
        "done",
        {"toolCalls": [{"name": "maker", "args": {"name": "a; touch x"}, "id": "c2"}]},
    ]
    gate = ApprovalsMiddleware(
        ApprovalsConfig(mode="manual"),
        rater=None,
        answers=True,
        command="notebook",
        cwd=str(tmp_path),
    )
    gate.grants.add("session", None, ("tool", "maker"))
    graph = create_agent(
        FakeChatModel(responses=calls),
        [make_custom_tool("maker", spec, tmp_path)],
        middleware=[gate],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    await graph.ainvoke({"messages": [HumanMessage("go")]}, config)
    assert not (await graph.aget_state(config)).interrupts  # granted: ran unasked
    assert (tmp_path / "ok").exists()
    await graph.ainvoke({"messages": [HumanMessage("again")]}, config)
    (pending,) = (await graph.aget_state(config)).interrupts  # invalid: asked all the same
    assert "failed validation" in pending.value["message"]
    assert not (tmp_path / "x").exists()


async def test_a_command_with_a_line_break_is_asked_as_not_grantable(tmp_path: Path) -> None:
    chat = Chat(tmp_path, ["echo a\nrm -f b", "echo a\nrm -f b", "echo hi"])
    (pending,) = await chat.turn("t1")
    value = pending.value
    assert value["grantable"] is False
    assert value["grantReason"] == (
        "This command contains a line break, which the shell reads as the start of another "
        "command, so it can be approved only this once, never always allowed."
    )
    assert "grant" not in value["responseSchema"]["properties"]  # nothing to send it in
    # A client that sends a grant anyway: approved this once, nothing kept.
    await chat.answer("t1", {"approved": True, "grant": "session"})
    assert (await chat.last_result("t1")).status == "success"
    assert len(chat.gate.grants) == 0
    assert len(await chat.turn("t1")) == 1  # the same command asks again
    await chat.answer("t1", {"approved": False})
    (pending,) = await chat.turn("t1")  # a plain one-line command stays grantable
    assert pending.value["grantable"] is True and "grantReason" not in pending.value
    assert "grant" in pending.value["responseSchema"]["properties"]


async def test_an_edit_into_a_multi_line_command_grants_nothing(tmp_path: Path) -> None:
    chat = Chat(tmp_path, ["echo a", "echo a\necho b"])
    await chat.turn("t1")
    edited = {"command": "echo a\necho b"}
    await chat.answer("t1", {"approved": True, "editedArgs": edited, "grant": "thread"})
    assert (await chat.last_result("t1")).status == "success"  # approved, so it ran once
    assert len(chat.gate.grants) == 0
    assert len(await chat.turn("t1")) == 1


async def test_a_stored_grant_never_covers_a_command_that_could_not_be_granted(
    tmp_path: Path,
) -> None:
    chat = Chat(tmp_path, ["echo a\recho b"])
    chat.gate.grants.add("session", None, ("shell", "echo a\recho b"))  # not through the gate
    (pending,) = await chat.turn("t1")
    assert pending.value["grantable"] is False and "line break" in pending.value["grantReason"]
