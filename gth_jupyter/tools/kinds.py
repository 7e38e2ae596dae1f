"""A tool's *kind* (for approvals), and the other keys of its metadata that only our code sets.

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

from typing import Any, Literal

from langchain_core.tools import BaseTool

__all__ = ["HINTS_KEY", "KIND_KEY", "MCP_KEY", "ToolKind", "adopt", "kind_of"]

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


def kind_of(tool: BaseTool | None) -> ToolKind:
    """The tool's kind; ``other`` when it carries none."""
    kind = (tool.metadata or {}).get(KIND_KEY) if tool is not None else None
    return kind if isinstance(kind, str) else "other"  # type: ignore[return-value]
