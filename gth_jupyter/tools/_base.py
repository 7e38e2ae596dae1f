"""What every built-in tool shares: how it is made (with its kind, see ``kinds.py``) and its live
output."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool
from pydantic import BaseModel

from gth_jupyter.tools.kinds import KIND_KEY, ToolKind

__all__ = ["FileToolSpec", "InjectedRuntime", "emit_output", "make_file_tools", "make_tool"]

#: How a tool function asks for LangGraph's ``ToolRuntime`` (stream writer, tool call id): a
#: parameter named ``runtime`` of this type, ``None`` when the tool is invoked outside a graph.
InjectedRuntime = Annotated[ToolRuntime | None, InjectedToolArg]


def make_tool(
    name: str,
    description: str,
    args_schema: type[BaseModel],
    coroutine: Callable[..., Awaitable[str]],
    kind: ToolKind,
    **metadata: Any,
) -> BaseTool:
    """An async structured tool whose ``ToolException`` becomes an error ``ToolMessage``."""
    tool = StructuredTool.from_function(
        coroutine=coroutine,
        name=name,
        description=description,
        args_schema=args_schema,
        handle_tool_error=True,
    )
    tool.metadata = {KIND_KEY: kind, **metadata}
    return tool


def emit_output(
    writer: Callable[[Any], None] | None,
    name: str,
    tool_call_id: str | None,
    chunk: str,
    *,
    notice: bool = False,
) -> None:
    """Send one live ``tool_output`` chunk (see ``agent/stream.py``); a no-op without a writer."""
    if writer is None or not chunk:
        return
    event: dict[str, Any] = {"type": "tool_output", "chunk": chunk, "name": name}
    if tool_call_id:
        event["id"] = tool_call_id
    if notice:
        event["isNotice"] = True
    writer(event)


FILE_TOOL_SUFFIX = " Only works within the working directory."

FileToolSpec = tuple[str, str, type[BaseModel], Callable[..., Awaitable[str]]]


def make_file_tools(specs: list[FileToolSpec], names: set[str], kind: ToolKind) -> list[BaseTool]:
    """The tools of ``specs`` whose names are in ``names``, each told it stays in the working
    directory."""
    return [
        make_tool(name, desc + FILE_TOOL_SUFFIX, schema, fn, kind)
        for name, desc, schema, fn in specs
        if name in names
    ]
