"""Fixtures for the tool tests: a real directory tree, and a tool call run through a real graph."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver

from gth_jupyter.models import FakeChatModel


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project with ignored, hidden, secret, binary and linked-out files, and an outside."""
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    write(outside / "loot.txt", "needle outside\n")
    write(root / ".gitignore", "build/\n*.log\n!keep.log\n")
    write(root / ".aiignore", "# private\nsecrets/\n*.key\n/config/prod.env\n")
    write(root / "src" / "app.py", "import os\n\ndef needle():\n    return 'needle'\n")
    write(root / "src" / "util" / "helpers.py", "# no match here\nNEEDLE = 1\n")
    write(root / "src" / "util" / ".gitignore", "generated.py\n")
    write(root / "src" / "util" / "generated.py", "needle generated\n")
    write(root / "README.md", "A needle in a haystack.\n" + "x" * 300 + " needle\n")
    write(root / "build" / "out.txt", "needle built\n")
    write(root / "trace.log", "needle logged\n")
    write(root / "keep.log", "needle kept\n")
    write(root / ".hidden" / "notes.txt", "needle hidden\n")
    write(root / ".env", "TOKEN=needle\n")
    write(root / "secrets" / "s.txt", "needle secret\n")
    write(root / "deep" / "secrets" / "s.txt", "needle deep secret\n")
    write(root / "id.key", "needle key\n")
    write(root / "config" / "prod.env", "needle prod\n")
    write(root / "config" / "dev.env", "needle dev\n")
    write(root / "blob.bin", b"needle\x00binary\n")
    write(root / "node_modules" / "dep" / "index.js", "needle dependency\n")
    write(root / "dist" / "bundle.js", "needle bundle\n")
    os.symlink(outside, root / "linked_out")
    os.symlink(outside / "loot.txt", root / "loot_link.txt")
    return root


@dataclass
class CallResult:
    message: ToolMessage
    events: list[dict[str, Any]]


async def run_call(
    tools: Sequence[BaseTool],
    name: str,
    args: dict[str, Any],
    *,
    middleware: Sequence[AgentMiddleware] = (),
) -> CallResult:
    """One model turn calling ``name``, through create_agent and a checkpointer; returns the
    *checkpointed* ToolMessage and the live ``custom`` events streamed meanwhile."""
    model = FakeChatModel(
        responses=[{"toolCalls": [{"name": name, "args": args, "id": "call-1"}]}, "done"]
    )
    graph = create_agent(
        model, list(tools), middleware=list(middleware), checkpointer=InMemorySaver()
    )
    config: Any = {"configurable": {"thread_id": "t1"}}
    events: list[dict[str, Any]] = []
    async for mode, data in graph.astream(
        {"messages": [HumanMessage("go")]}, config, stream_mode=["custom", "updates"]
    ):
        if mode == "custom":
            events.append(data)
    state = await graph.aget_state(config)
    messages = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
    assert len(messages) == 1, messages
    return CallResult(messages[0], events)


def output_text(events: list[dict[str, Any]]) -> str:
    return "".join(
        e["chunk"] for e in events if e.get("type") == "tool_output" and not e.get("isNotice")
    )
