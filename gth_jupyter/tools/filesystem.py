"""Which file tools a command gets, from its ``filesystem`` setting.

``"all"``: every read and write tool; ``"read"``: the read tools; ``"none"``: none; a list may mix
``"read"``, ``"all"`` and single tool names (``["read", "write_file"]``). An unknown name is logged
and skipped.
"""

from __future__ import annotations

import logging

from langchain_core.tools import BaseTool

from gth_jupyter.config.schema import FilesystemSetting
from gth_jupyter.tools.fs_read import READ_TOOLS, make_read_tools
from gth_jupyter.tools.fs_write import WRITE_TOOLS, make_write_tools
from gth_jupyter.tools.workspace import Workspace

__all__ = ["FILESYSTEM_TOOLS", "filesystem_tool_names", "make_filesystem_tools"]

log = logging.getLogger(__name__)

FILESYSTEM_TOOLS = (*READ_TOOLS, *WRITE_TOOLS)


def filesystem_tool_names(setting: FilesystemSetting) -> list[str]:
    """The file tool names ``setting`` enables, in a stable order."""
    items = [setting] if isinstance(setting, str) else list(setting)
    wanted: set[str] = set()
    for item in items:
        if item == "all":
            wanted.update(FILESYSTEM_TOOLS)
        elif item == "read":
            wanted.update(READ_TOOLS)
        elif item in FILESYSTEM_TOOLS:
            wanted.add(item)
        elif item != "none":
            log.warning("Unknown filesystem tool: %s", item)
    return [name for name in FILESYSTEM_TOOLS if name in wanted]


def make_filesystem_tools(setting: FilesystemSetting, workspace: Workspace) -> list[BaseTool]:
    names = set(filesystem_tool_names(setting))
    return [*make_read_tools(workspace, names), *make_write_tools(workspace, names)]
