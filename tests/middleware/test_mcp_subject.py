"""An MCP tool whose call name had to be shortened is still matched by its real server and tool
names (kept in its metadata), so ``mcpTool`` entries reach it."""

from __future__ import annotations

from langchain_core.tools import StructuredTool
from pydantic import BaseModel

from gth_jupyter.config.schema import ApprovalEntry
from gth_jupyter.tools.kinds import KIND_KEY
from tests.middleware.test_approvals_flow import Flow, gate

SHORT = "mcp__a_very_long_server_key_th__delete_everything_7f3a2b1c"


class NoArgs(BaseModel):
    pass


def shortened_tool(ran: list[str]) -> StructuredTool:
    async def run() -> str:
        ran.append("ran")
        return "done"

    tool = StructuredTool.from_function(
        coroutine=run, name=SHORT, description="x", args_schema=NoArgs
    )
    tool.metadata = {  # as tools/mcp/servers.py builds it: our kind, the real names, the hints
        KIND_KEY: "mcp",
        "mcp": {"server": "a.very.long.server.key.that.was.cut", "tool": "delete everything"},
        "annotations": {"destructiveHint": True, "readOnlyHint": False},
    }
    return tool


async def test_a_deny_entry_on_the_real_names_refuses_a_shortened_tool() -> None:
    ran: list[str] = []
    entry = ApprovalEntry(
        type="mcpTool",
        server="a.very.long.server.key.that.was.cut",
        matcher="exact",
        pattern="delete everything",
    )
    flow = Flow([shortened_tool(ran)], gate("manual", deny=[entry]), SHORT, {})
    assert await flow.start() == ()
    state = await flow.graph.aget_state(flow.config)
    result = next(m for m in state.values["messages"] if m.type == "tool")
    assert result.status == "error" and "deny rule" in result.content and ran == []


async def test_an_allow_entry_on_the_real_names_runs_it_at_manual() -> None:
    ran: list[str] = []
    entry = ApprovalEntry(type="mcpTool", server="*", matcher="exact", pattern="delete everything")
    flow = Flow([shortened_tool(ran)], gate("manual", allow=[entry]), SHORT, {})
    assert await flow.start() == ()
    assert ran == ["ran"]
