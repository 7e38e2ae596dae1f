"""The tools a headless ``%gth`` turn declares are the ones a chat widget declares.

Both read their specs from one file (``contract/spec/browser_tools.json``): the model must see
the same names, descriptions and schemas with or without a browser, so what each side declares
is compared here.
"""

from __future__ import annotations

from gth_jupyter.contract.names import NOTEBOOK_TOOLS
from gth_jupyter.notebook.headless._tools import BROWSER_TOOLS, declared_tools
from gth_jupyter.notebook.host import client_tools
from tests.node import run_js

#: Prints the widget's built-in tools as it declares them (its handlers left out), and the names
#: of its notebook tools.
PRINT_BUILTINS = """
const { BUILTIN_TOOLS } = await import("./src/tools/registry.js");
const { NOTEBOOK_TOOLS } = await import("./src/tools/notebook.js");
const spec = ({ name, description, parameters }) => ({ name, description, parameters });
output({ builtins: BUILTIN_TOOLS.map(spec), notebook: NOTEBOOK_TOOLS });
"""


def test_the_browser_tools_are_the_widgets_own_specs() -> None:
    widget = run_js(PRINT_BUILTINS)
    assert widget["builtins"] == list(BROWSER_TOOLS)
    assert [t["name"] for t in BROWSER_TOOLS] == ["capture_image", "ask_user", "browser_context"]
    assert tuple(widget["notebook"]) == NOTEBOOK_TOOLS


def test_a_headless_turn_declares_the_builtins_and_this_kernels_client_tools() -> None:
    client_tools.client_tool("roll_dice", "Roll n dice.", js="async () => [6, 6]")
    try:
        declared = {tool.name: tool for tool in declared_tools()}
    finally:
        client_tools.remove_client_tool("roll_dice")
    assert list(declared) == ["capture_image", "ask_user", "browser_context", "roll_dice"]
    assert declared["roll_dice"].description == "Roll n dice."
    assert declared["ask_user"].parameters == BROWSER_TOOLS[1]["parameters"]
    # A client_tool cannot take a built-in's name, which the browser would not run as declared.
    assert {spec["name"] for spec in BROWSER_TOOLS} <= client_tools.BUILT_IN
