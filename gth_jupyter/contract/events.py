"""The renderer contract: what an agent run streams to every front end.

``AgentStreamEvent`` mirrors Gaunt Sloth's TypeScript union of the same name, field for field:
the AG-UI encoder, the notebook widget's comm transport and any embedder read this and nothing
else, so none of them needs to know how the LangGraph graph was built.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

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


_M = TypeVar("_M", bound=BaseModel)
_new = object.__new__
# The setters of a pydantic model's four slots (what ``object.__setattr__`` finds, without the
# lookup): ``with_delta`` runs twice per streamed token.
_SLOTS = BaseModel.__dict__
_set_dict = _SLOTS["__dict__"].__set__
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__


def with_delta(template: _M, delta: str) -> _M:
    """``template`` (a validated event with a ``delta`` field) with another ``delta``, built
    without pydantic validation.

    A streamed answer is thousands of delta events that differ from the first only in their
    text, which is already a checked ``str``: copying a validated event costs a third of
    validating each one (tests hold the copy equal to a validated event). The copy shares the
    template's set of given fields, so what a dump leaves out stays the same."""
    event = _new(type(template))
    fields = template.__dict__.copy()
    fields["delta"] = delta
    _set_dict(event, fields)
    _set_fields_set(event, template.__pydantic_fields_set__)
    _set_extra(event, template.__pydantic_extra__)
    _set_private(event, template.__pydantic_private__)
    return event
