"""A tool card in a saved copy shows what the widget's card shows, for the same call.

The widget draws a call's card in the page (``js/src/view/toolcard.js`` with
``kernelcards.js``, ``notebookcards.js`` and ``binarycard.js``); the static copy writes it into
the notebook (``copy/_tools.py`` and ``_notebook.py``). The code must exist twice (DOM
in the browser, text blocks in the kernel), so the same hostile calls go through both here and
what a person reads is compared: the images (only inline types in strict base64), the outputs
and code (ANSI-free; the copy may cut the middle of a long one), the tables, the headlines.

What the copy words its own way (its status line, its caps on long tables, the widget's
extra Series rows and click-to-load actions) is left out of the comparison, by name below.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from gth_jupyter.copy._blocks import Code, Image, Line, Note, Table, cut
from gth_jupyter.copy._tools import (
    CODE_CHARS,
    MAX_COLS,
    MAX_ROWS,
    OUTPUT_CHARS,
    ToolCall,
    tool_card,
)
from tests.node import IMAGE_TYPES, run_js

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(48))).decode()
LINK = "see \x1b]8;;https://x.org\x1b\\docs\x1b]8;;\x1b\\ here"
COLOURED = "".join(f"\x1b[3{n % 8}mline {n}\x1b[0m\n" for n in range(900))
#: Every image type a result may name, and data that is no clean base64.
IMAGES = [
    *(
        {"mimeType": t, "data": PNG}
        for t in (*IMAGE_TYPES, "IMAGE/PNG", "image/png;charset=x", "text/html")
    ),
    {"mimeType": "image/png", "data": PNG[:20] + "\n " + PNG[20:]},
    {"mimeType": "image/png", "data": PNG[:20] + "\u00a0" + PNG[20:]},
    {"mimeType": "image/png", "data": "javascript:alert(1)"},
    {"mimeType": "image/png", "data": "QU=JD"},
    {"mimeType": "image/png", "data": None, "omitted": True},
]

CASES: list[tuple[str, dict[str, Any] | None, Any]] = [
    (
        "run_python",
        {"code": "print('\x1b[31mred\x1b[0m')\n" + "x = 1\n" * 50, "justification": LINK},
        {
            "status": "ok",
            "stdout": LINK + "\n" + COLOURED,
            "stderr": "\x1b[33mwarning\x1b[0m: careful",
            "result": "\x1b]8;;https://v\x07value\x1b]8;;\x07",
            "displays": ["<Figure size 640x480>", "\x1b[1mbold display\x1b[0m", 7],
            "images": IMAGES,
            "note": "3 more image(s) left out",
            "elapsed": 0.5,
        },
    ),
    (
        "run_python",
        {"code": "1 / 0"},
        {
            "status": "error",
            "stdout": "",
            "stderr": "",
            "result": None,
            "error": {
                "ename": "\x1b[31mZeroDivisionError\x1b[0m",
                "evalue": LINK,
                "traceback": ["\x1b[0;31m---\x1b[0m", "\x1b]8;;file:///x.py\x07x.py\x1b]8;;\x07"],
            },
            "elapsed": 12.0,
        },
    ),
    (
        "run_python",
        {"code": "while True: pass"},
        {"status": "timeout", "stdout": "x" * 9000, "note": "interrupted", "elapsed": 30},
    ),
    (
        "list_variables",
        {},
        {
            "variables": [
                {
                    "name": "sales\x1b]8;;https://e\x07link\x1b]8;;\x07",
                    "type": "DataFrame",
                    "shape": [120, 9],
                    "size_bytes": size,
                    "columns": [{"name": f"c{i}", "dtype": "float64"} for i in range(9)],
                }
                for size in (0, 12, 1023, 1024, 1280, 10752, 1536000, 3 * 1024**4, 2**60, -1)
            ]
            + [
                {"name": "xs", "type": "list", "length": 3, "size_bytes": 12.5},
                {"name": "flag", "type": "bool", "size_bytes": True},
                {"name": "odd", "type": None, "shape": "x", "size_bytes": "12"},
            ],
            "total": 13,
            "offset": 0,
            "next_offset": None,
        },
    ),
    (
        "describe_variable",
        {"name": "sales"},
        {
            "name": "sales",
            "type": "DataFrame",
            "shape": [3, 2],
            "size_bytes": 4096,
            "data_context": "schema",
            "columns": [{"name": "month", "dtype": "object"}, {"name": "n", "dtype": "int64"}],
            "null_counts": {"month": 0, "n": 2},
            "describe": {
                "columns": ["n"],
                "index": ["count", "mean"],
                "data": [[3], [None]],
            },
            "head": {
                "columns": ["month", "n"],
                "index": [0, 1, "two", 3.0, None],
                "data": [
                    ["\x1b[31mjan\x1b[0m", 1],
                    [{"nested": [1, "é"]}, None],
                    [True, 1.0],
                    [2.5, 1e21],
                    [-0.0, [False, None]],
                ],
            },
            "repr": "\x1b[1m   month  n\x1b[0m\n" + LINK,
        },
    ),
    (
        "describe_variable",
        {"name": "wide"},
        {
            "name": "wide",
            "type": "DataFrame",
            "head": {
                "columns": [f"c{i}" for i in range(60)],
                "index": list(range(120)),
                "data": [[r * c for c in range(60)] for r in range(120)],
            },
        },
    ),
    ("capture_image", {}, {"mimeType": "image/jpeg", "data": PNG}),
    ("capture_image", {}, {"mimeType": "image/svg+xml", "data": PNG}),
    ("some_tool", {}, {"mimeType": "image/webp", "data": PNG}),
    ("some_tool", {}, {"mimeType": "image/png", "data": PNG + "\u00a0"}),
    (
        "gth_read_binary",
        {"path": "a.png"},
        f"gth_read_binary;type:image;path:a.png;data:image/png;base64,{PNG}",
    ),
    (
        "gth_read_binary",
        {"path": "a.svg"},
        f"gth_read_binary;type:image;path:a.svg;data:image/svg+xml;base64,{PNG}",
    ),
    (
        "gth_read_binary",
        {"path": "b.bmp"},
        f"gth_read_binary;type:image;path:b.bmp;data:image/bmp;base64,{PNG}",
    ),
    (
        "read_notebook",
        {},
        {
            "path": "analysis.ipynb",
            "cell_count": 40,
            "cells": [
                {"index": 0, "type": "markdown", "source": "\n\n# Title \x1b[1mbold\x1b[0m"},
                {"index": 1, "type": "code", "source": "y" * 300, "asking": True},
                {
                    "index": 2,
                    "type": "code",
                    "source": "1/0",
                    "outputs": [{"type": "error", "ename": "ZeroDivisionError"}],
                },
                *({"index": 3 + n, "type": "code", "source": f"c{n}"} for n in range(70)),
            ],
        },
    ),
    (
        "read_notebook",
        {},
        {
            "path": 5,
            "cell_count": "7",
            "cells": [{"index": 0, "source": "a"}, {"index": None, "source": ["l1", "l2"]}, {}],
        },
    ),
    ("read_notebook", {}, {"path": "", "cell_count": 0, "cells": []}),
    (
        "insert_cell",
        {"source": "print(1)\n" + LINK, "cell_type": "code", "run": True, "justification": "w"},
        {
            "cell_id": "abc",
            "index": 4,
            "status": "ok",
            "execution_count": 7,
            "stdout": COLOURED,
            "images": IMAGES[:5],
        },
    ),
    ("insert_cell", {"source": "# Notes", "cell_type": "markdown"}, {"cell_id": "m1", "index": 5}),
    (
        "edit_cell",
        {"cell_id": "abc", "source": "print(2)"},
        {"cell_id": "abc", "diff": ["- print(1)", "+ print(2)"], "added": 1, "removed": 1},
    ),
    ("edit_cell", {"cell_id": "abc", "source": "same"}, {"cell_id": "abc", "diff": []}),
    ("edit_cell", {"cell_id": "x"}, {"cell_id": "x", "diff": ["+ a"], "added": None}),
]

CARDS = """
const { makeDom } = await import("./test-support/dom.mjs");
const { ToolCard } = await import("./src/view/toolcard.js");
const { document } = makeDom();
const frames = { mark: (_key, fn) => fn() };
const text = (el) => el.textContent;
const OUTPUTS = ["stdout", "stderr", "result", "display", "error"].map((k) => `.gth-run-${k}`);
const HEADLINES = [
  ".gth-describe-header",
  ".gth-notebook-read > .gth-run-status",
  ".gth-notebook-edit > .gth-run-status",
].join();
output(input.map(([name, args, result], n) => {
  const card = new ToolCard(document, frames, { toolCallId: `c${n}`, name });
  if (args !== null) card.setArgs(JSON.stringify(args));
  card.setResult(typeof result === "string" ? result : JSON.stringify(result));
  const el = card.el;
  const all = (sel) => [...el.querySelectorAll(sel)];
  return {
    images: all("img").map((i) => i.getAttribute("src")),
    outputs: all(OUTPUTS.join()).map(text),
    code: all("pre.gth-run-code").map(text),
    tables: all(".gth-tool-body table").map((t) => ({
      caption: t.querySelector("caption")?.textContent ?? "",
      head: [...t.querySelectorAll("thead th")].map(text),
      rows: [...t.querySelectorAll("tbody tr")].map((r) => [...r.children].map(text)),
    })),
    headline: el.querySelector(HEADLINES)?.textContent ?? null,
    diff: all(".gth-notebook-edit .gth-diff-line").map((l) => l.textContent.replace(/\\n$/, "")),
    cells: all(".gth-nb-cell").map((li) => [
      li.querySelector(".gth-nb-index").textContent.slice(1, -1),
      li.querySelector(".gth-nb-line").textContent,
    ]),
    notes: all(".gth-kernel-note:not(.gth-binary-caption)").map(text),
  };
}));
"""


def _copy(name: str, args: dict[str, Any] | None, result: Any) -> dict[str, Any]:
    call = ToolCall("c", name, json.dumps(args) if args is not None else "")
    call.result = result if isinstance(result, str) else json.dumps(result)
    card = tool_card(call, save_photos=True)
    parts = card.parts
    lines = [p.text for p in parts if isinstance(p, Line)]
    return {
        "images": [p.url for p in parts if isinstance(p, Image)],
        "outputs": [
            p.text
            for p in parts
            if isinstance(p, Code) and p.cls in ("gth-copy-output", "gth-copy-error")
        ],
        "code": [
            p.text for p in parts if isinstance(p, Code) and p.language in ("python", "markdown")
        ],
        "tables": [
            {"caption": p.caption, "head": list(p.head), "rows": [list(r) for r in p.rows]}
            for p in parts
            if isinstance(p, Table)
        ],
        "lines": lines,
        "diff": next(
            (p.text.split("\n") for p in parts if isinstance(p, Code) and p.language == "diff"), []
        ),
        "notes": [p.text for p in parts if isinstance(p, Note)],
    }


def test_a_saved_card_shows_what_the_widgets_card_shows() -> None:
    widget = run_js(CARDS, [list(case) for case in CASES])
    saved_cards = [_copy(*case) for case in CASES]
    for (name, _args, result), live, saved in zip(CASES, widget, saved_cards, strict=True):
        where = f"{name}: {json.dumps(result)[:80]}"
        # Kernel output is ANSI-free in both (code, arguments and data cells are shown as written).
        assert not any("\x1b" in t for t in live["outputs"] + saved["outputs"]), where
        assert saved["images"] == live["images"], where
        assert saved["outputs"] == [cut(t, OUTPUT_CHARS) for t in live["outputs"]], where
        assert saved["code"] == [cut(t, CODE_CHARS) for t in live["code"]], where
        if name == "list_variables":
            # Name, type, shape and size of each variable (the copy lists the columns uncut).
            rows = [r[:4] for t in saved["tables"] for r in t["rows"]]
            assert rows == [r[:4] for t in live["tables"] for r in t["rows"]], where
        elif name == "describe_variable":
            assert saved["lines"][0] == live["headline"], where
            for copy_table, page_table in zip(saved["tables"], live["tables"], strict=True):
                # The copy keeps fewer rows and columns than the page (its file stays small).
                assert copy_table["head"] == page_table["head"][: MAX_COLS + 1], where
                rows = [r[: MAX_COLS + 1] for r in page_table["rows"][:MAX_ROWS]]
                assert copy_table["rows"] == rows, where
                if len(page_table["rows"]) <= MAX_ROWS and len(page_table["head"]) <= MAX_COLS:
                    assert copy_table["caption"] == page_table["caption"], where
        elif name == "read_notebook":
            assert saved["lines"][0] == live["headline"], where
            listed = [[r[0], r[2]] for t in saved["tables"] for r in t["rows"]]
            assert listed == live["cells"], where
        elif name == "edit_cell":
            assert saved["lines"][-1] == live["headline"], where
            assert saved["diff"] == live["diff"], where
        if (
            name in ("run_python", "insert_cell")
            and isinstance(result, dict)
            and result.get("note")
        ):
            assert result["note"] in saved["notes"] and result["note"] in live["notes"], where


def test_only_inline_types_in_strict_base64_become_images_in_either() -> None:
    (_, args, result) = CASES[0]
    saved = _copy("run_python", args, result)
    assert saved["images"] == [
        f"data:{t};base64,{PNG}" for t in ("image/png", "image/jpeg", "image/gif", "image/webp")
    ] + [f"data:image/png;base64,{PNG}"]
    binary = [_copy(*c)["images"] for c in CASES if c[0] == "gth_read_binary"]
    assert binary == [[f"data:image/png;base64,{PNG}"], [], []]
