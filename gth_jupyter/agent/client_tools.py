"""Client tools: tools the browser (or any AG-UI client) runs, not the server.

The model sees an ordinary tool with the client's JSON Schema. When it calls one, the call never
reaches the placeholder body: ``ClientToolMiddleware`` intercepts it and suspends the graph with
LangGraph ``interrupt()``, carrying the call's name, id and arguments. The run then ends, the
client fulfils the call, and the next run resumes the graph with the client's answer, which
becomes the call's ``ToolMessage``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command, interrupt

#: Marks an interrupt raised for a client tool call (as opposed to an approval, say).
CLIENT_TOOL_INTERRUPT = "gth.client_tool"

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class ClientToolSpec:
    """A tool the client fulfils: what the model is told about it."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_SCHEMA))

    def signature(self) -> tuple[str, str]:
        """Identity for graph caching: descriptions do not change the graph."""
        return self.name, json.dumps(self.parameters, sort_keys=True, default=str)


@dataclass(frozen=True)
class ClientToolAnswer:
    """The client's answer to one suspended call, passed through ``Command(resume=...)``."""

    status: Literal["resolved", "cancelled"] = "resolved"
    payload: Any = None
    is_error: bool = False
    message_id: str | None = None

    def to_resume_value(self) -> dict[str, Any]:
        return {
            "kind": CLIENT_TOOL_INTERRUPT,
            "status": self.status,
            "payload": self.payload,
            "isError": self.is_error,
            "messageId": self.message_id,
        }


def content_of(value: Any) -> str:
    """A resume value as ToolMessage content: a string as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _schema_of(spec: ClientToolSpec) -> dict[str, Any]:
    schema = dict(spec.parameters) if spec.parameters else dict(EMPTY_SCHEMA)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def make_client_tool(spec: ClientToolSpec) -> BaseTool:
    """A placeholder tool carrying the client's schema; its body never runs."""

    async def _never(**_: Any) -> str:  # pragma: no cover - intercepted by the middleware
        raise RuntimeError(f"client tool {spec.name} must be fulfilled by the client")

    tool = StructuredTool.from_function(
        coroutine=_never,
        name=spec.name,
        description=spec.description or f"A tool run by the user's client: {spec.name}.",
        args_schema=_schema_of(spec),
    )
    tool.metadata = {"client": True}
    return tool


def is_client_tool(tool: BaseTool) -> bool:
    return bool((tool.metadata or {}).get("client"))


def interrupt_payload(name: str, tool_call_id: str, args: Any) -> dict[str, Any]:
    return {"type": CLIENT_TOOL_INTERRUPT, "name": name, "toolCallId": tool_call_id, "args": args}


def tool_message_for(name: str, tool_call_id: str, answer: Any) -> ToolMessage:
    """Turns whatever the resume carried into the call's ToolMessage."""
    if isinstance(answer, Mapping) and answer.get("kind") == CLIENT_TOOL_INTERRUPT:
        if answer.get("status") == "cancelled":
            return ToolMessage(
                content=f"The user cancelled the {name} tool call.",
                tool_call_id=tool_call_id,
                name=name,
                status="error",
                id=answer.get("messageId") or None,
            )
        return ToolMessage(
            content=content_of(answer.get("payload")),
            tool_call_id=tool_call_id,
            name=name,
            status="error" if answer.get("isError") else "success",
            id=answer.get("messageId") or None,
        )
    # Gaunt Sloth's shape: the raw resume value is the result.
    return ToolMessage(content=content_of(answer), tool_call_id=tool_call_id, name=name)


ToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


class ClientToolMiddleware(AgentMiddleware):
    """Suspends the graph on calls to client tools instead of running them."""

    def __init__(self, names: Iterable[str]) -> None:
        super().__init__()
        self.names = frozenset(names)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: ToolHandler
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        if call["name"] not in self.names:
            return await handler(request)
        call_id = call.get("id") or ""
        answer = interrupt(interrupt_payload(call["name"], call_id, call.get("args", {})))
        return tool_message_for(call["name"], call_id, answer)
