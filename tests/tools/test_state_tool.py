"""``gth_update_state``: a Command that merges into the shared state channel."""

from __future__ import annotations

from langchain_core.messages import ToolMessage
from langgraph.types import Command

from gth_jupyter.config.effective import KNOWN_BUILT_IN_TOOLS
from gth_jupyter.contract.shared_state import STATE_KEY
from gth_jupyter.tools.registry import FACTORIES
from gth_jupyter.tools.state import make_state_tool


def test_the_tool_returns_a_state_update_with_its_tool_message() -> None:
    tool = make_state_tool()
    call = {
        "name": "gth_update_state",
        "args": {"state": {"recipe": {"servings": 4}}},
        "id": "c1",
        "type": "tool_call",
    }
    result = tool.invoke(call)
    assert isinstance(result, Command)
    update = result.update
    assert isinstance(update, dict)
    assert update[STATE_KEY] == {"recipe": {"servings": 4}}
    [message] = update["messages"]
    assert isinstance(message, ToolMessage) and message.tool_call_id == "c1"
    assert "recipe" in str(message.content)


def test_the_model_sees_only_the_state_argument() -> None:
    schema = make_state_tool().tool_call_schema.model_json_schema()
    assert list(schema["properties"]) == ["state"]


def test_it_is_a_known_built_in_tool() -> None:
    assert "gth_update_state" in KNOWN_BUILT_IN_TOOLS and "gth_update_state" in FACTORIES
