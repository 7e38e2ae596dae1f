"""The tools a headless ``%gth`` turn declares are the ones a chat widget declares.

``headless/_tools.BROWSER_TOOLS`` repeats the built-in browser tools' specs of ``js/src/tools/``
(the widget's bundle is not Python's to read at run time): the model must see the same names,
descriptions and schemas with or without a browser, so the two are compared here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gth_jupyter.notebook.headless._tools import BROWSER_TOOLS, declared_tools
from gth_jupyter.notebook.host import client_tools

JS = Path(__file__).resolve().parents[2] / "js"
#: Prints the widget's built-in tools as it declares them (its handlers left out).
PRINT_BUILTINS = """
const { BUILTIN_TOOLS } = await import("./src/tools/registry.js");
const spec = ({ name, description, parameters }) => ({ name, description, parameters });
process.stdout.write(JSON.stringify(BUILTIN_TOOLS.map(spec)));
"""


def test_the_browser_tools_are_the_widgets_own_specs() -> None:
    if shutil.which("node") is None:
        pytest.skip("no node to read js/src/tools/ with")
    out = subprocess.run(
        ["node", "--input-type=module", "-e", PRINT_BUILTINS],
        cwd=JS,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(out.stdout) == list(BROWSER_TOOLS)


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
