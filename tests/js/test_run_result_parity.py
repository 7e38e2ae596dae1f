"""``insert_cell``'s run result (shaped in the browser, ``js/src/tools/notebook_summary.js``
``runResult``) says what ``run_python``'s says for the same outputs (``kernel/execute.py``
``shape``): the model and the image middleware read both the same way. The two cannot share
code (one runs in the page, the other in the server), so they share their constants
(``contract/spec/output.json``: the ANSI pattern, the caps, the image types) and the same
hostile outputs go through both: OSC hyperlinks, long and coloured text, every image type.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from gth_jupyter.contract.text import strip_ansi
from gth_jupyter.kernel.access import run_answer
from gth_jupyter.kernel.client import Execution
from gth_jupyter.kernel.execute import shape
from tests.node import IMAGE_TYPES, run_js

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + bytes(range(32))).decode()
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
#: The issue's hyperlink: OSC 8 ended by ST (ESC \), then by BEL.
LINK = "see \x1b]8;;https://x.org\x1b\\docs\x1b]8;;\x1b\\ here"
LINK_BEL = "see \x1b]8;;https://x.org\x07docs\x1b]8;;\x07 here"
#: Many coloured links in a row.
LINKS = "".join(
    f"\x1b[3{n % 8}m{n}\x1b]8;;https://e/{n}\x1b\\link{n}\x1b]8;;\x1b\\" for n in range(2000)
)
#: Text the kernel can print: links, colours, cursor moves, window titles, cut-off escapes.
HOSTILE_TEXT = [
    LINK,
    LINK_BEL,
    "\x1b]8;id=1;https://a.example/?q=\x1b[31m\x1b\\a\x1b]8;;\x1b\\ and \x1b]8;;https://b\x07b\x1b]8;;\x07",
    "\x1b]0;window title\x07prompt$ ",
    "\x1b]8;;https://never.closed/ text after",
    "\x1b[38;5;196mred\x1b[0m \x1b[48;2;0;0;255mblue\x1b[0m \x1b[?25lhidden cursor\x1b[?25h",
    "progress\r\x1b[2K\x1b[1Gdone \x1b[",
    "\x1b[1m" + "bold " * 5000 + "\x1b[0m",
    LINKS,
]
#: Every image type an output may hold, wrapped as kernels wrap base64, and more than one.
IMAGE_OUTPUTS: list[dict[str, Any]] = [
    {"output_type": "display_data", "data": {mime: PNG, "text/plain": mime}}
    for mime in IMAGE_TYPES[1:]
] + [
    {"output_type": "display_data", "data": {"image/jpeg": JPEG, "image/png": PNG[::-1]}},
    {"output_type": "display_data", "data": {"image/png": "\n".join([PNG[:20], PNG[20:]])}},
    {"output_type": "display_data", "data": {"image/png": f"{PNG[:30]}\u00a0{PNG[30:]}"}},
    {"output_type": "display_data", "data": {"image/png": ""}},
    {
        "output_type": "display_data",
        "data": {"text/plain": "\x1b[32m" + "long display " * 400 + LINK},
    },
    {"output_type": "stream", "name": "stdout", "text": LINK + "\n" + HOSTILE_TEXT[-1]},
    {
        "output_type": "error",
        "ename": "\x1b[31mValueError\x1b[0m",
        "evalue": LINK + " " + "\x1b[1mv\x1b[0m" * 3000,
        "traceback": [LINK, HOSTILE_TEXT[2], "x" * 25_000],
    },
]
RUN_RESULT = """
const { runResult } = await import("./src/tools/notebook_summary.js");
const failed = (outputs) => outputs.some((o) => o.output_type === "error");
output(input.map((outputs) => runResult({ status: failed(outputs) ? "error" : "ok", outputs })));
"""
STRIP_ANSI = """
const { stripAnsi } = await import("./src/tools/notebook_summary.js");
output(input.map(stripAnsi));
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


def _kernels(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    execution = Execution(msg_id="m", shell="main", outputs=_as_messages(outputs), started=True)
    failed = any(o["output_type"] == "error" for o in outputs)
    execution.reply, execution.completed = {"status": "error" if failed else "ok"}, True
    answer = run_answer(shape(execution))
    return {k: answer.get(k) for k in COMPARED}


def _browsers(cases: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{k: r.get(k) for k in COMPARED} for r in run_js(RUN_RESULT, cases)]


def test_insert_cells_run_result_is_run_pythons_for_the_same_outputs() -> None:
    [browser] = _browsers([OUTPUTS])
    kernel = _kernels(OUTPUTS)
    assert browser == kernel
    assert "\x1b" not in json.dumps(kernel) and len(kernel["images"]) == 4


def test_ansi_escapes_are_stripped_alike_and_a_links_text_stays() -> None:
    browser = run_js(STRIP_ANSI, HOSTILE_TEXT)
    assert browser == [strip_ansi(text) for text in HOSTILE_TEXT]
    # The stricter reading won: an OSC ends at its first terminator, so the link's text stays
    # (the kernel's greedy pattern took 'docs' with the link: 'see  here').
    assert browser[:2] == ["see docs here", "see docs here"]
    assert strip_ansi(HOSTILE_TEXT[-1]).startswith("0link01link12link2")


def test_the_run_results_agree_on_every_image_type_and_hostile_text() -> None:
    cases = [[output] for output in IMAGE_OUTPUTS] + [IMAGE_OUTPUTS]
    browser = _browsers(cases)
    kernel = [_kernels(case) for case in cases]
    assert browser == kernel
    # Only the run's image types (output.json: PNG, the kernel's own) reach the model: the
    # browser took JPEG, GIF and WebP too before.
    whole = kernel[-1]
    assert {i["mimeType"] for i in whole["images"]} == {"image/png"}
    # Unwrapped of ASCII white space only (a no-break space stays, and no copy draws it).
    assert [i["data"] for i in whole["images"]] == [PNG[::-1], PNG, f"{PNG[:30]}\u00a0{PNG[30:]}"]
    assert not any(case["images"] for case in kernel[:7])
    assert whole["error"]["ename"] == "ValueError" and "\x1b" not in json.dumps(whole)
    assert len(whole["error"]["evalue"]) < 2100 and "characters cut" in whole["error"]["evalue"]
