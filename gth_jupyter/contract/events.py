"""The renderer contract: what an agent run streams to every front end.

``AgentStreamEvent`` mirrors Gaunt Sloth's TypeScript union of the same name, field for field:
the AG-UI encoder, the notebook widget's comm transport and any embedder read this and nothing
else, so none of them needs to know how the LangGraph graph was built.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


class TextEvent(_Event):
    type: Literal["text"] = "text"
    delta: str


class ReasoningStartEvent(_Event):
    type: Literal["reasoning_start"] = "reasoning_start"


class ReasoningDeltaEvent(_Event):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    delta: str


class ReasoningEndEvent(_Event):
    type: Literal["reasoning_end"] = "reasoning_end"


class ToolStartEvent(_Event):
    type: Literal["tool_start"] = "tool_start"
    id: str
    name: str


class ToolArgsEvent(_Event):
    type: Literal["tool_args"] = "tool_args"
    id: str
    delta: str


class ToolEndEvent(_Event):
    type: Literal["tool_end"] = "tool_end"
    id: str


class ToolOutputEvent(_Event):
    """One live chunk of a running tool's output (a shell command's stdout, say)."""

    type: Literal["tool_output"] = "tool_output"
    chunk: str
    name: str
    id: str | None = None
    is_notice: bool | None = Field(default=None, alias="isNotice")


class ToolResultEvent(_Event):
    """A finished tool call; ``isError`` comes from ``ToolMessage.status``, never from the text."""

    type: Literal["tool_result"] = "tool_result"
    id: str
    content: str
    is_error: bool | None = Field(default=None, alias="isError")
    rater_clarification: bool | None = Field(default=None, alias="raterClarification")


AgentStreamEvent = Annotated[
    TextEvent
    | ReasoningStartEvent
    | ReasoningDeltaEvent
    | ReasoningEndEvent
    | ToolStartEvent
    | ToolArgsEvent
    | ToolEndEvent
    | ToolOutputEvent
    | ToolResultEvent,
    Field(discriminator="type"),
]

agent_stream_event_adapter: TypeAdapter[AgentStreamEvent] = TypeAdapter(AgentStreamEvent)


def parse_agent_stream_event(data: object) -> AgentStreamEvent:
    """Validates a JSON-shaped value (camelCase keys) as an ``AgentStreamEvent``."""
    return agent_stream_event_adapter.validate_python(data)


def dump_agent_stream_event(event: AgentStreamEvent) -> dict[str, object]:
    """The JSON shape of an event: camelCase keys, absent optionals left out."""
    return event.model_dump(by_alias=True, exclude_none=True)
