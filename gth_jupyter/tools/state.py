"""``gth_update_state``: the model changes the thread's shared (AG-UI) state.

The shared state is a JSON object the client and the agent both see: the client sends it as
``RunAgentInput.state``, the model reads it in its system prompt, and clients follow it through
``STATE_SNAPSHOT`` / ``STATE_DELTA`` events. This tool merges ``{"state": {...}}`` into it as an
RFC 7386 JSON Merge Patch (nested objects merge, ``null`` removes a key, anything else replaces).

Any tool can do the same: return a LangGraph ``Command`` whose update writes the partial state
to the ``gth_state`` channel, with the tool message, e.g. in ``.gsloth.config.py``::

    from langchain_core.messages import ToolMessage
    from langchain_core.tools import InjectedToolCallId, tool
    from langgraph.types import Command

    @tool
    def set_servings(n: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        "Set the recipe's servings."
        return Command(update={
            "gth_state": {"recipe": {"servings": n}},
            "messages": [ToolMessage("Done.", tool_call_id=tool_call_id)],
        })
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.types import Command
from pydantic import BaseModel, Field

from gth_jupyter.contract.shared_state import STATE_KEY
from gth_jupyter.tools.kinds import KIND_KEY

NAME = "gth_update_state"


class UpdateStateArgs(BaseModel):
    state: dict[str, Any] = Field(
        description=(
            "The part of the shared state to change, merged into it: nested objects merge, "
            "null removes a key, any other value (a list, say) replaces the old one."
        )
    )
    tool_call_id: Annotated[str, InjectedToolCallId]


def make_state_tool() -> BaseTool:
    def gth_update_state(state: dict[str, Any], tool_call_id: str) -> Command[Any]:
        keys = ", ".join(sorted(state)) or "nothing"
        return Command(
            update={
                STATE_KEY: state,
                "messages": [
                    ToolMessage(
                        f"Shared state updated ({keys}).", tool_call_id=tool_call_id, name=NAME
                    )
                ],
            }
        )

    tool = StructuredTool.from_function(
        func=gth_update_state,
        name=NAME,
        description=(
            "Change the state shared with the user's client (shown to you as JSON in the "
            "system prompt, and to the user by their client). Pass only what changes, as "
            '{"state": {...}}: it is merged into the current state.'
        ),
        args_schema=UpdateStateArgs,
    )
    tool.metadata = {KIND_KEY: "inert"}
    return tool
