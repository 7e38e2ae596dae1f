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

A call may be of another kind than its tool: ``insert_cell`` is a ``write``, but a call with
``run: true`` runs its ``source`` in the kernel and is ``code``. Such a tool carries
``metadata["gth_code_when"] = {"flag": "run", "code": "source"}`` and :func:`kind_of_call` /
:func:`code_of_call` read the call through it.

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

from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.tools import BaseTool

__all__ = [
    "CODE_WHEN_KEY",
    "HINTS_KEY",
    "KIND_KEY",
    "MCP_KEY",
    "ToolKind",
    "adopt",
    "code_argument",
    "code_of_call",
    "kind_of",
    "kind_of_call",
]

ToolKind = Literal["inert", "read", "write", "shell", "code", "exec", "network", "mcp", "other"]
KIND_KEY = "gth_kind"
#: An MCP tool's real server and tool names, and its four hints (set by ``tools/mcp.py``).
MCP_KEY = "mcp"
HINTS_KEY = "annotations"
#: When a call of this tool is ``code``: ``{"flag": <boolean argument>, "code": <argument>}``.
CODE_WHEN_KEY = "gth_code_when"
_OURS = frozenset({KIND_KEY, MCP_KEY, HINTS_KEY, CODE_WHEN_KEY})


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


def _code_when(tool: BaseTool | None) -> dict[str, str] | None:
    when = (tool.metadata or {}).get(CODE_WHEN_KEY) if tool is not None else None
    if isinstance(when, dict) and isinstance(when.get("flag"), str):
        if isinstance(when.get("code"), str):
            return when
    return None


def kind_of_call(tool: BaseTool | None, args: Mapping[str, Any]) -> ToolKind:
    """The kind of one call of ``tool``: ``code`` when the argument its ``gth_code_when``
    names is set, else the tool's kind."""
    when = _code_when(tool)
    if when is not None and _flag_set(args.get(when["flag"])):
        return "code"
    return kind_of(tool)


def code_argument(tool: BaseTool | None) -> str:
    """The argument holding a ``code`` call's code: ``code`` (``run_python``), or the one the
    tool's ``gth_code_when`` names (``insert_cell``'s ``source``)."""
    when = _code_when(tool)
    return when["code"] if when is not None else "code"


def code_of_call(tool: BaseTool | None, args: Mapping[str, Any]) -> str:
    """The code a ``code`` call runs."""
    value = args.get(code_argument(tool), "")
    return value if isinstance(value, str) else str(value)


def _flag_set(value: object) -> bool:
    # The browser reads the raw arguments (nothing validates a client tool's call first), so
    # whatever JavaScript takes for true ("false", [], {}) is gated as code: only what it takes
    # for false (absent, null, false, 0, "") is not.
    if value is None or value == "":
        return False
    if isinstance(value, (bool, int, float)):
        return value != 0
    return True
