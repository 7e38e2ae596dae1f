"""``insert_cell``'s run result (shaped in the browser, ``js/src/tools/notebook_summary.js``
``runResult``) says what ``run_python``'s says for the same outputs (``kernel/execute.py``
``shape``): the model and the image middleware read both the same way. The two cannot share
code (one runs in the page, the other in the server), so one set of outputs goes through both.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.kernel.access import run_answer
from gth_jupyter.kernel.client import Execution
from gth_jupyter.kernel.execute import shape

JS = Path(__file__).resolve().parents[2] / "js"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
#: nbformat outputs of one cell: coloured and long text, a figure both displayed and the value,
#: more figures than a result keeps, and a coloured traceback.
OUTPUTS: list[dict[str, Any]] = [
    {"output_type": "stream", "name": "stdout", "text": "\x1b[1mhi\x1b[0m\n" + "x" * 30_000},
    {"output_type": "stream", "name": "stderr", "text": "careful\n"},
    {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}},
    *(
        {"output_type": "display_data", "data": {"image/png": f"{PNG}{n}A==", "text/plain": "f"}}
        for n in range(5)
    ),
    {"output_type": "execute_result", "data": {"image/png": PNG, "text/plain": "<Figure>"}},
    {
        "output_type": "error",
        "ename": "KeyError",
        "evalue": "\x1b[31m'revenue'\x1b[0m",
        "traceback": ["\x1b[0;31mKeyError\x1b[0m Traceback", "----> 1 sales['revenue']"],
    },
]
RUN_RESULT = """
const { runResult } = await import("./src/tools/notebook_summary.js");
const outputs = JSON.parse(process.argv[1]);
process.stdout.write(JSON.stringify(runResult({ status: "error", outputs })));
"""
COMPARED = ("status", "stdout", "stderr", "result", "displays", "images", "error", "note")


def _as_messages(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same outputs as the kernel's iopub messages, which ``shape`` reads."""
    return [
        {
            "msg_type": o["output_type"],
            "content": {k: v for k, v in o.items() if k != "output_type"},
        }
        for o in outputs
    ]


def test_insert_cells_run_result_is_run_pythons_for_the_same_outputs() -> None:
    if shutil.which("node") is None:
        pytest.skip("no node to run js/src/tools/notebook_summary.js with")
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", RUN_RESULT, json.dumps(OUTPUTS)],
        cwd=JS,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    browser = json.loads(ran.stdout)
    execution = Execution(msg_id="m", shell="main", outputs=_as_messages(OUTPUTS), started=True)
    execution.reply, execution.completed = {"status": "error"}, True
    kernel = run_answer(shape(execution))
    assert {k: browser.get(k) for k in COMPARED} == {k: kernel.get(k) for k in COMPARED}
    assert "\x1b" not in json.dumps(kernel) and len(kernel["images"]) == 4
