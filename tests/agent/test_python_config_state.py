"""A ``.gsloth.config.py`` tool changes the shared state, as the docs of ``gth_update_state``
show: the client sees the change as a ``STATE_DELTA`` and in the closing ``STATE_SNAPSHOT``."""

from __future__ import annotations

import textwrap
from pathlib import Path

from langchain_core.messages import HumanMessage

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import load_config
from gth_jupyter.contract.run import RunEnd, RunPlan
from gth_jupyter.contract.shared_state import StateDelta, StateSnapshot
from gth_jupyter.store import CheckpointStore

CONFIG = textwrap.dedent(
    """
    from typing import Annotated

    from langchain_core.messages import ToolMessage
    from langchain_core.tools import InjectedToolCallId, tool
    from langgraph.types import Command

    from gth_jupyter.models import FakeChatModel


    @tool
    def set_servings(n: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        '''Set the recipe's servings.'''
        return Command(update={
            "gth_state": {"recipe": {"servings": n}},
            "messages": [ToolMessage("Done.", tool_call_id=tool_call_id)],
        })


    def configure():
        call = {"name": "set_servings", "args": {"n": 4}, "id": "c1"}
        return {
            "llm": FakeChatModel(responses=[{"toolCalls": [call]}, "Four servings."]),
            "tools": [set_servings],
        }
    """
)


async def test_a_python_config_tool_updates_the_shared_state(tmp_path: Path) -> None:
    (tmp_path / ".gsloth.config.py").write_text(CONFIG)
    (tmp_path / "home").mkdir()
    config = load_config(cwd=tmp_path, home=tmp_path / "home")
    registry = AgentRegistry(
        config, command="notebook", store=CheckpointStore("memory"), cwd=tmp_path
    )
    assert registry.build_error is None, registry.build_error
    runtime = await registry.runtime()
    plan = RunPlan("t", [HumanMessage("make it four")], state={"recipe": {"title": "Soup"}})
    items = [i async for i in runtime.stream(plan)]
    assert isinstance(items[-1], RunEnd)
    snapshots = [i.snapshot for i in items if isinstance(i, StateSnapshot)]
    deltas = [i.delta for i in items if isinstance(i, StateDelta)]
    assert snapshots[0] == {"recipe": {"title": "Soup"}}
    assert deltas == [[{"op": "add", "path": "/recipe/servings", "value": 4}]]
    assert snapshots[-1] == {"recipe": {"title": "Soup", "servings": 4}}
    assert (await runtime.thread_state("t")).state == snapshots[-1]
