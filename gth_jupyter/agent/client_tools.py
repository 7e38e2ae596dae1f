"""Client tools: tools the browser (or any AG-UI client) runs, not the server.

The model sees an ordinary tool with the client's JSON Schema. When it calls one, the call never
reaches the placeholder body: ``ClientToolMiddleware`` intercepts it and suspends the graph with
LangGraph ``interrupt()``, carrying the call's name, id and arguments. The run then ends, the
client fulfils the call, and the next run resumes the graph with the client's answer (a
:class:`~gth_jupyter.contract.resume.ClientToolAnswer`), which becomes the call's ``ToolMessage``.

Client tools are not gated by approvals (the suspension wraps the gate), except the notebook
tools (:mod:`gth_jupyter.tools.notebook_tools`): a second ``ClientToolMiddleware`` inside the
gate suspends those, so a refused or rejected call never reaches the browser. Their description,
schema and kind are ours by name, whatever the client declared (a page cannot make
``insert_cell`` a read).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command, interrupt

from ..contract.pending import CLIENT_TOOL_INTERRUPT
from ..contract.resume import ClientToolAnswer
from ..contract.run import EMPTY_SCHEMA, ClientToolSpec
from ..contract.undo import UNDO_KEY, split_undo
from ..tools.kinds import adopt
from ..tools.notebook_tools import (
    is_notebook_tool,
    notebook_kind,
    notebook_metadata,
    notebook_spec,
)


def _schema_of(spec: ClientToolSpec) -> dict[str, Any]:
    schema = dict(spec.parameters) if spec.parameters else dict(EMPTY_SCHEMA)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def make_client_tool(spec: ClientToolSpec) -> BaseTool:
    """A placeholder tool carrying the client's schema (ours for a notebook tool); its body never
    runs."""
    if is_notebook_tool(spec.name):
        spec = notebook_spec(spec.name)

    async def _never(**_: Any) -> str:  # pragma: no cover - intercepted by the middleware
        raise RuntimeError(f"client tool {spec.name} must be fulfilled by the client")

    tool = StructuredTool.from_function(
        coroutine=_never,
        name=spec.name,
        description=spec.description or f"A tool run by the user's client: {spec.name}.",
        args_schema=_schema_of(spec),
    )
    tool.metadata = {"client": True}
    if is_notebook_tool(spec.name):
        adopt(tool, notebook_kind(spec.name), client=True, **notebook_metadata(spec.name))
    return tool


def is_client_tool(tool: BaseTool) -> bool:
    return bool((tool.metadata or {}).get("client"))


def interrupt_payload(name: str, tool_call_id: str, args: Any) -> dict[str, Any]:
    return {"type": CLIENT_TOOL_INTERRUPT, "name": name, "toolCallId": tool_call_id, "args": args}


def tool_message_for(name: str, tool_call_id: str, answer: ClientToolAnswer) -> ToolMessage:
    """The call's ToolMessage for the client's answer."""
    if answer.status == "cancelled":
        return ToolMessage(
            content=f"The user cancelled the {name} tool call.",
            tool_call_id=tool_call_id,
            name=name,
            status="error",
            id=answer.message_id,
        )
    # What an edit replaced stays with the call, off the model's view (contract/undo.py).
    content, undo = split_undo(name, answer.content())
    return ToolMessage(
        content=content,
        tool_call_id=tool_call_id,
        name=name,
        status="error" if answer.is_error else "success",
        id=answer.message_id,
        artifact={UNDO_KEY: undo} if undo is not None else None,
    )


ToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


class ClientToolMiddleware(AgentMiddleware):
    """Suspends the graph on calls to client tools instead of running them; ``gated`` marks the
    one that sits inside the approvals gate (for the notebook tools)."""

    def __init__(self, names: Iterable[str], *, gated: bool = False) -> None:
        super().__init__()
        self.names = frozenset(names)
        self.gated = gated

    @property
    def name(self) -> str:
        # create_agent refuses two middleware of one name; the gated one is a second instance.
        return "GatedClientToolMiddleware" if self.gated else "ClientToolMiddleware"

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: ToolHandler
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        if call["name"] not in self.names:
            return await handler(request)
        call_id = call.get("id") or ""
        value = interrupt(interrupt_payload(call["name"], call_id, call.get("args", {})))
        return tool_message_for(call["name"], call_id, ClientToolAnswer.from_resume_value(value))
