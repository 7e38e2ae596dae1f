"""Which file tools a command gets, from its ``filesystem`` setting.

``"all"``: every read and write tool; ``"read"``: the read tools; ``"none"``: none; a list may mix
``"read"``, ``"all"`` and single tool names (``["read", "write_file"]``). An unknown name is logged
and skipped.

``gth_read_binary`` (``binary.py``) is one of the read tools when ``binaryFormats`` lists at
least one format, as in Gaunt Sloth; without it the name enables nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from langchain_core.tools import BaseTool

from gth_jupyter.config.schema import BinaryFormatConfig, FilesystemSetting
from gth_jupyter.tools.fs._read import READ_TOOLS, make_read_tools
from gth_jupyter.tools.fs._write import WRITE_TOOLS, make_write_tools
from gth_jupyter.tools.fs.binary import READ_BINARY, make_read_binary_tool
from gth_jupyter.tools.fs.workspace import Workspace

__all__ = ["FILESYSTEM_TOOLS", "filesystem_tool_names", "make_filesystem_tools"]

log = logging.getLogger(__name__)

FILESYSTEM_TOOLS = (*READ_TOOLS, *WRITE_TOOLS)


def filesystem_tool_names(setting: FilesystemSetting, *, binary: bool = False) -> list[str]:
    """The file tool names ``setting`` enables, in a stable order; ``binary``: whether
    ``binaryFormats`` is configured (then ``gth_read_binary`` follows the read tools)."""
    read = (*READ_TOOLS, READ_BINARY) if binary else READ_TOOLS
    every = (*read, *WRITE_TOOLS)
    items = [setting] if isinstance(setting, str) else list(setting)
    wanted: set[str] = set()
    for item in items:
        if item == "all":
            wanted.update(every)
        elif item == "read":
            wanted.update(read)
        elif item in every:
            wanted.add(item)
        elif item != "none" and item != READ_BINARY:
            log.warning("Unknown filesystem tool: %s", item)
    return [name for name in every if name in wanted]


def make_filesystem_tools(
    setting: FilesystemSetting,
    workspace: Workspace,
    binary_formats: Sequence[BinaryFormatConfig] | None = None,
) -> list[BaseTool]:
    """The file tools ``setting`` enables, bound to ``workspace``; ``binary_formats`` is
    ``binaryFormats`` (``gth_read_binary`` is among them only when it is a non-empty list)."""
    names = set(filesystem_tool_names(setting, binary=bool(binary_formats)))
    tools = make_read_tools(workspace, names)
    if binary_formats and READ_BINARY in names:
        tools.append(make_read_binary_tool(workspace, binary_formats))
    return [*tools, *make_write_tools(workspace, names)]
