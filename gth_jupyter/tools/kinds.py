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

A call may be of another kind than its tool: code the notebook's kernel will run is ``code``
whichever tool puts it there. Such a tool carries ``metadata["gth_code_when"]``, which
:func:`kind_of_call` and :func:`code_of_call` read the call through:

- ``{"unless": ["cell_type", "markdown"], "code": "source"}``: ``insert_cell`` and ``edit_cell``
  are ``code`` unless the cell is markdown (a code cell the agent wrote runs at the next Run
  All, whether or not the call runs it);
- ``{"flag": "run", "code": "source"}``: ``code`` when the boolean argument is set;
- ``{"module_path": "path", "code": "content"}``: the file tools are ``code`` when the path names
  an installed module (``pandas.py``: what the next ``import pandas`` in that folder runs, see
  ``fs/protected.py``).

A tool with no kind (from a Python config...) is treated as ``other``: gated wherever the mode
gates anything beyond the file tools.

The kind, an MCP tool's real names (``mcp``) and its hints (``annotations``) are *ours*: only the
code that builds a tool sets them. A tool source (an MCP server's annotations, a
``.gsloth.config.py`` tool's metadata) could otherwise choose how its own tool is gated. So
``tools/mcp/servers.py`` keeps nothing of a server's annotations but the four hints, and a
config tool goes through :func:`adopt`, which drops whatever it wrote under these keys (and any
``gth_*`` key) before setting ours. A client's tool declaration never reaches ``metadata`` at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.tools import BaseTool

from gth_jupyter.tools.fs.protected import names_module

__all__ = [
    "CODE_WHEN_KEY",
    "HINTS_KEY",
    "KIND_KEY",
    "MCP_KEY",
    "ToolKind",
    "adopt",
    "code_argument",
    "code_is_text",
    "code_of_call",
    "kind_of",
    "kind_of_call",
]

ToolKind = Literal["inert", "read", "write", "shell", "code", "exec", "network", "mcp", "other"]
KIND_KEY = "gth_kind"
#: An MCP tool's real server and tool names, and its four hints (set by ``tools/mcp/servers.py``).
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


def _code_when(tool: BaseTool | None) -> dict[str, Any] | None:
    when = (tool.metadata or {}).get(CODE_WHEN_KEY) if tool is not None else None
    if not isinstance(when, dict) or not isinstance(when.get("code"), str):
        return None
    unless = when.get("unless")
    if isinstance(when.get("flag"), str) or isinstance(when.get("module_path"), str):
        return when
    if isinstance(unless, list) and len(unless) == 2 and isinstance(unless[0], str):
        return when
    return None


def _is_code(when: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    if isinstance(when.get("flag"), str):
        return _flag_set(args.get(when["flag"]))
    if isinstance(when.get("module_path"), str):
        path = args.get(when["module_path"])
        return isinstance(path, str) and names_module(path)
    # The browser reads the raw arguments: anything but exactly the exempt value is code.
    key, exempt = when["unless"]
    return bool(args.get(key) != exempt)


def kind_of_call(tool: BaseTool | None, args: Mapping[str, Any]) -> ToolKind:
    """The kind of one call of ``tool``: ``code`` when its ``gth_code_when`` says so, else the
    tool's kind."""
    when = _code_when(tool)
    if when is not None and _is_code(when, args):
        return "code"
    return kind_of(tool)


def code_argument(tool: BaseTool | None) -> str:
    """The argument holding a ``code`` call's code: ``code`` (``run_python``), or the one the
    tool's ``gth_code_when`` names (``insert_cell``'s ``source``)."""
    when = _code_when(tool)
    return str(when["code"]) if when is not None else "code"


def code_of_call(tool: BaseTool | None, args: Mapping[str, Any]) -> str:
    """The code a ``code`` call runs or writes (an argument that is not text, ``edit_file``'s
    edits, as JSON)."""
    value = args.get(code_argument(tool), "")
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def code_is_text(tool: BaseTool | None, args: Mapping[str, Any]) -> bool:
    """Whether the call's code is one text argument (which an approval card can edit as code)."""
    return isinstance(args.get(code_argument(tool)), str)


def _flag_set(value: object) -> bool:
    # The browser reads the raw arguments (nothing validates a client tool's call first), so
    # whatever JavaScript takes for true ("false", [], {}) is gated as code: only what it takes
    # for false (absent, null, false, 0, "") is not.
    if value is None or value == "":
        return False
    if isinstance(value, (bool, int, float)):
        return value != 0
    return True
