"""Browser tools defined from a notebook cell: the teaching case for frontend tools.

``client_tool("roll_dice", "Roll n dice", {...}, js="async ({n}) => ...")`` registers a tool
that every chat widget in this kernel declares to the agent and runs in the browser. The
JavaScript is the notebook author's own code, run in their own page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gth_jupyter.contract.names import NOTEBOOK_TOOLS  # not tools/: %gth loads no agent stack
from gth_jupyter.contract.spec import spec

from ._host import Offering, kernel_host

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
#: The widget's own browser tools. The notebook tools among them (``read_notebook``,
#: ``insert_cell``, ``edit_cell``) are gated by approvals, with the schema and kind our code gives
#: them (``tools/notebook_tools.py``), whatever a page declares.
BUILT_IN = frozenset({*spec("browser_tools")["builtin"], *NOTEBOOK_TOOLS})


class ClientTool(dict[str, Any]):
    """A registered tool's spec (``name``, ``description``, ``parameters``, ``js``) that shows
    as one line when it is a cell's value, rather than echoing the JavaScript back."""

    def summary(self) -> str:
        name = self["name"]
        return f"Browser tool {name!r} registered: the chat widgets of this kernel offer it."

    def __repr__(self) -> str:
        return f"<{self.summary()}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.summary())


def client_tool(
    name: str,
    description: str,
    parameters: Mapping[str, Any] | None = None,
    *,
    js: str,
) -> ClientTool:
    """Registers (or replaces) a browser tool for every chat widget in this kernel."""
    if not _NAME.match(name):
        raise ValueError(
            f"Tool name {name!r} must start with a letter or _ and use only letters, digits, _ "
            "or -, up to 64 characters."
        )
    if name in BUILT_IN:
        raise ValueError(f"{name!r} is a built-in browser tool; pick another name.")
    if not js.strip():
        raise ValueError("js must be the source of a function, e.g. 'async (args) => ...'.")
    schema = dict(parameters) if parameters else {"type": "object", "properties": {}}
    if schema.get("type", "object") != "object":
        raise ValueError("parameters must be a JSON Schema object ({'type': 'object', ...}).")
    spec = ClientTool(name=name, description=description, parameters=schema, js=js)
    kernel_host().client_tools[name] = spec
    _publish()
    return spec


def remove_client_tool(name: str) -> None:
    kernel_host().client_tools.pop(name, None)
    _publish()


def registered_tools() -> list[dict[str, Any]]:
    return list(kernel_host().client_tools.values())


def track(widget: Offering) -> None:
    kernel_host().widgets.add(widget)


def _publish() -> None:
    for widget in list(kernel_host().widgets):
        widget.client_tools = registered_tools()
