"""The tools a headless ``%gth`` turn declares, as a chat widget would with a browser.

A widget declares its browser tools itself (``js/src/tools/``); a headless run declares the
same ones (:data:`BROWSER_TOOLS`: both read ``contract/spec/browser_tools.json``) and this
kernel's ``client_tool``s, so the model sees the same tools with or without a browser. Their
calls are answered by ``_answers``.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import ag_ui.core as agui

from ...contract.spec import spec
from ..host import client_tools

__all__ = ["BROWSER_TOOLS", "declared_tools"]

#: The browser tools a chat widget declares itself, in its order and as it declares them (one
#: spec for both, ``contract/spec/browser_tools.json``, which ``js/src/tools/`` reads too), so
#: the model sees the same tools with or without a browser.
BROWSER_TOOLS: tuple[dict[str, Any], ...] = tuple(
    {"name": name, **deepcopy(tool)} for name, tool in spec("browser_tools")["builtin"].items()
)


def declared_tools() -> list[agui.Tool]:
    """What a widget with no notebook front end declares: the built-in browser tools and the
    ``client_tool``s registered in this kernel (a registered one replaces a built-in)."""
    tools = {tool["name"]: tool for tool in BROWSER_TOOLS}
    for tool in client_tools.registered_tools():
        tools[tool["name"]] = tool
    return [
        agui.Tool(
            name=tool["name"],
            description=str(tool.get("description") or ""),
            parameters=tool.get("parameters") or {"type": "object", "properties": {}},
        )
        for tool in tools.values()
    ]
