"""Built-in tools by name, as the resolved ``builtInTools`` registry enables them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.tools import BaseTool

from .a2ui import make_a2ui_tool
from .checklist import make_checklist_tool
from .status import make_status_tool

log = logging.getLogger(__name__)

ToolFactory = Callable[[Mapping[str, Any]], BaseTool]

FACTORIES: dict[str, ToolFactory] = {
    "gth_checklist": lambda settings: make_checklist_tool(),
    "gth_status_update": lambda settings: make_status_tool(),
    "show_a2ui_surface": lambda settings: make_a2ui_tool(),
}


def built_in_tools(enabled: Mapping[str, Mapping[str, Any]]) -> list[BaseTool]:
    """One tool per enabled name that this version provides; others are logged and skipped."""
    tools: list[BaseTool] = []
    for name, settings in enabled.items():
        factory = FACTORIES.get(name)
        if factory is None:
            log.info("Built-in tool %s is not available in this version of gth-jupyter", name)
            continue
        tools.append(factory(settings))
    return tools
