"""What every built-in tool shares: its *kind* (for approvals) and live output.

The kind travels in ``tool.metadata["gth_kind"]`` so the approvals middleware can tell a read from a
write from a shell command without a name list that would drift from the tools:

- ``inert``: changes nothing outside the conversation (checklist, status line, UI surface);
- ``read`` / ``write``: the built-in file tools (``gth_grep`` is a read);
- ``shell``: ``run_shell_command``, whose command the approvals rules and the rater read;
- ``code``: ``run_python``, code run in the notebook's kernel, which the rater reads as it reads
  a shell command;
- ``exec``: fixed commands (dev tools, custom tools); ``network``: ``gth_web_fetch``;
- ``mcp``: a tool of an MCP server, gated as ``other``.

A tool with no kind (from a Python config...) is treated as ``other``: gated wherever the mode
gates anything beyond the file tools.

The kind, an MCP tool's real names (``mcp``) and its hints (``annotations``) are *ours*: only the
code that builds a tool sets them. A tool source (an MCP server's annotations, a
``.gsloth.config.py`` tool's metadata) could otherwise choose how its own tool is gated. So
``tools/mcp.py`` keeps nothing of a server's annotations but the four hints, and a config tool
goes through :func:`adopt`, which drops whatever it wrote under these keys (and any ``gth_*``
key) before setting ours. A client's tool declaration never reaches ``metadata`` at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from langchain.tools import ToolRuntime
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool
from pydantic import BaseModel

__all__ = ["Runtime", "ToolKind", "adopt", "emit_output", "kind_of", "make_tool"]

#: How a tool function asks for LangGraph's ``ToolRuntime`` (stream writer, tool call id): a
#: parameter named ``runtime`` of this type, ``None`` when the tool is invoked outside a graph.
Runtime = Annotated[ToolRuntime | None, InjectedToolArg]

ToolKind = Literal["inert", "read", "write", "shell", "code", "exec", "network", "mcp", "other"]
KIND_KEY = "gth_kind"
#: An MCP tool's real server and tool names, and its four hints (set by ``tools/mcp.py``).
MCP_KEY = "mcp"
HINTS_KEY = "annotations"
_OURS = frozenset({KIND_KEY, MCP_KEY, HINTS_KEY})


def _ours(key: object) -> bool:
    return not isinstance(key, str) or key in _OURS or key.startswith("gth_")


def adopt(tool: BaseTool, kind: ToolKind, **ours: Any) -> BaseTool:
    """``tool``, from a source we do not control, with its metadata cleared of our keys (whatever
    the source wrote there) and given ``kind`` and ``ours``; changed in place and returned."""
    kept = {k: v for k, v in (tool.metadata or {}).items() if not _ours(k)}
    tool.metadata = {**kept, KIND_KEY: kind, **ours}
    return tool


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


def kind_of(tool: BaseTool | None) -> ToolKind:
    """The tool's kind; ``other`` when it carries none."""
    kind = (tool.metadata or {}).get(KIND_KEY) if tool is not None else None
    return kind if isinstance(kind, str) else "other"  # type: ignore[return-value]


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
