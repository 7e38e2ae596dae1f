"""The agent's Markdown made safe for a saved notebook: as HTML, and as Markdown again.

A static copy is rendered by whatever opens the file: nbconvert puts ``text/html`` in its page
unsanitised, JupyterLab renders a trusted notebook's Markdown with its raw HTML, GitHub and
nbviewer sanitise each their own way. So what the model wrote never reaches them as markup:
raw HTML is shown as text, a link goes only to an absolute ``http(s)`` URL (or ``mailto:``),
and an image renders only from an inline ``data:`` URL of a raster type; a remote image becomes
a link to it (opening it is the reader's choice; loading it would be a request in their name).
This is the widget's policy (``js/src/media.js``, ``js/src/markdown.js``).

Both forms come from mistune's parse of the text (mistune 3, which nbconvert uses too), so the
Markdown copy is rebuilt from the same tree the HTML is: text is escaped where it could become
markup again. The Markdown form stays inert under CommonMark and GFM renderers with autolinks
(``marked``, which JupyterLab uses; markdown-it with ``linkify``; mistune with its url plugin).
Their autolink extensions read a bare ``www.``/``http://`` URL or an e-mail address in the raw
text, across backslash escapes: ``http://e.com\\<img`` becomes a link that swallows the
backslash and leaves a live ``<img``. So nothing that could start HTML or a link is escaped by
backslash: ``<``, ``>``, ``&``, ``[`` and ``]`` are written as character references, which no
extension splits (at worst a link swallows one and shows it); other punctuation is escaped by
backslash (what a swallowed one leaves, emphasis or a code span, is inert). A bare URL the parse
found is written as a CommonMark autolink (``<https://…>``), which no extension reads on past,
and an inline code span whose text could be markup as ``<code>`` with that text escaped: a URL
glued to a backtick would break the span open.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any, cast
from urllib.parse import quote, urlsplit

import mistune
from mistune.renderers.html import HTMLRenderer
from mistune.renderers.markdown import MarkdownRenderer

from ..contract.spec import spec

__all__ = [
    "inline_image_url",
    "markdown_to_html",
    "markdown_to_markdown",
    "md_code",
    "md_code_span",
    "md_text",
]

#: Image types a copy shows inline, as the widget and the notebook extension do (one list for
#: all three, ``contract/spec/media.json``): no SVG, which is a document.
IMAGE_TYPES = frozenset(spec("media")["inlineImageTypes"])
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
# The white space base64 may be wrapped with: ASCII only, as the widget reads it.
_WRAP = re.compile(r"[\t\n\v\f\r ]+")
_DATA_URL = re.compile(r"^data:(image/[a-z]+);base64,(.*)$", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]*>")
# What could start HTML or a link is a character reference (an autolink cannot split it from a
# backslash); the rest of CommonMark's punctuation that could start markup, a backslash escape.
_REFERENCES = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "[": "&#91;", "]": "&#93;"}
_MD_SPECIAL = re.compile(r"[\\`*_{}\[\]()<>#+\-!|~&]")
# In text the parser already read, only what could start inline markup or HTML: pipes and dashes
# stay, so a table (which the Markdown copy does not parse) still reads as one.
_MD_INLINE = re.compile(r"[\\`*_\[\]<>!&~]")
# Inline code that stays code even if a renderer breaks the span open (an autolink taking its
# opening backtick, a table row splitting it at a pipe): nothing in it can start HTML or a link.
_PLAIN_CODE = re.compile(r"^[^<>&\[\]|]*$")
_CODE_LANGUAGE = re.compile(r"[^\w#+.-]")


def _escape(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(lambda m: _REFERENCES.get(m[0]) or "\\" + m[0], text)


def inline_image_url(mime: object, data: object) -> str | None:
    """``data:<mime>;base64,<data>`` for a raster image (its type exactly as named) in strict
    base64, else None: the widget's ``inlineImageUrl`` (``js/src/media.js``)."""
    if not isinstance(mime, str) or mime not in IMAGE_TYPES or not isinstance(data, str):
        return None
    clean = _WRAP.sub("", data)
    if not _BASE64.fullmatch(clean):
        return None
    return f"data:{mime};base64,{clean}"


def _data_image(url: str) -> str | None:
    # A URL's scheme and type are case-insensitive (the widget's media policy reads them so).
    found = _DATA_URL.match(url.strip())
    return inline_image_url(found.group(1).lower(), found.group(2)) if found else None


def _link_url(url: str) -> str | None:
    """An absolute http(s) URL with a host and no credentials, or mailto:, quoted; else None."""
    url = url.strip()
    if any(ord(c) < 32 or c.isspace() for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme == "mailto" and len(url) > 7:
        return quote(url, safe=":@.+-_~!$&'*,;=/?%")
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    if (
        parts.username is not None
        or parts.password is not None
        or not url[len(scheme) :].startswith("://")
    ):
        return None
    # Quote what could end an attribute or a Markdown link target; keep the URL's meaning.
    return quote(url, safe=":/?#@!$&'*+,;=%-._~[]")


def _image_label(alt: str, href: str | None) -> str:
    """What stands for a remote image: its alt text and the host it would come from."""
    host = urlsplit(href).hostname if href else None
    label = f"image: {alt}" if alt else "image"
    return f"{label} ({host})" if host else label


def md_text(text: str, *, inline: bool = False) -> str:
    """Plain text as Markdown that shows it literally (every character that could start markup
    escaped); ``inline`` joins lines with spaces (a table cell), else with hard breaks."""
    lines = [_escape(_MD_SPECIAL, line) for line in str(text).splitlines()]
    return " ".join(lines) if inline else "  \n".join(line for line in lines)


def md_code(text: str, language: str = "") -> str:
    """A fenced code block that no backtick run inside ``text`` can close."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{language}\n{body}{fence}"


def md_code_span(text: str) -> str:
    """Inline code that no backtick run inside ``text`` can end, and that shows no markup when a
    renderer breaks it open: text that could be markup is ``<code>`` with that text escaped."""
    text = " ".join(text.split())
    if not _PLAIN_CODE.match(text):
        # A pipe as a reference too: a table row (the model's, kept as text) would split at it.
        return (
            "<code>" + "&#124;".join(md_text(p, inline=True) for p in text.split("|")) + "</code>"
        )
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


class _SafeHtml(HTMLRenderer):
    """mistune's HTML renderer with raw HTML escaped and the link and image policy above."""

    def __init__(self) -> None:
        super().__init__(escape=True)

    def link(self, text: str, url: str, title: str | None = None) -> str:
        href = _link_url(url)
        if href is None:
            return text  # the words stay; there is nothing to follow
        return f'<a href="{html.escape(href)}" rel="noopener noreferrer nofollow">{text}</a>'

    def image(self, text: str, url: str, title: str | None = None) -> str:
        alt = html.escape(_TAGS.sub("", html.unescape(text)))
        inline = _data_image(url)
        if inline is not None:
            return f'<img src="{html.escape(inline)}" alt="{alt}" />'
        href = _link_url(url)
        label = html.escape(_image_label(_TAGS.sub("", html.unescape(text)), href))
        if href is None:
            return f"[{label}]"
        return f'<a href="{html.escape(href)}" rel="noopener noreferrer nofollow">[{label}]</a>'


def _plain(token: dict[str, Any]) -> str:
    """The text of an inline token's children, markup aside (an image's alt text)."""
    return "".join(
        _plain(c) if "children" in c else str(c.get("raw", " " if "break" in c["type"] else ""))
        for c in token.get("children", ())
    )


class _SafeMarkdown(MarkdownRenderer):
    """mistune's Markdown renderer that leaves no markup the source did not have as Markdown:
    raw HTML and text are escaped, links and images follow the policy above."""

    def render_referrences(self, state: Any) -> Iterable[str]:
        return ()  # reference links are written inline (see link), so no definitions follow

    def text(self, token: dict[str, Any], state: Any) -> str:
        return _escape(_MD_INLINE, cast(str, token["raw"]))

    def codespan(self, token: dict[str, Any], state: Any) -> str:
        return md_code_span(cast(str, token["raw"]))

    def block_code(self, token: dict[str, Any], state: Any) -> str:
        # The info string's first word, word characters only: renderers put it in an attribute.
        info = str(token.get("attrs", {}).get("info") or "").split()
        language = _CODE_LANGUAGE.sub("", info[0]) if info else ""
        return md_code(cast(str, token["raw"]), language) + "\n\n"

    def inline_html(self, token: dict[str, Any], state: Any) -> str:
        return md_text(cast(str, token["raw"]), inline=True)

    def block_html(self, token: dict[str, Any], state: Any) -> str:
        return md_text(cast(str, token["raw"]).strip()) + "\n\n"

    def link(self, token: dict[str, Any], state: Any) -> str:
        text = self.render_children(token, state)
        href = _link_url(str(token.get("attrs", {}).get("url", "")))
        if href is None:
            return text
        if _plain(token) == href:
            return f"<{href}>"  # a bare URL: as an autolink, it needs no escapes in its text
        # A bare destination: quoted, it has no space or parenthesis; one in <...> would be an
        # autolink if a renderer read the label differently.
        return f"[{text}]({href})"

    def image(self, token: dict[str, Any], state: Any) -> str:
        alt = self.render_children(token, state)
        url = str(token.get("attrs", {}).get("url", ""))
        inline = _data_image(url)
        if inline is not None:
            return f"![{alt}]({inline})"
        href = _link_url(url)
        label = md_text(f"[{_image_label(_TAGS.sub('', _plain(token)), href)}]", inline=True)
        return label if href is None else f"[{label}]({href})"


_to_html = mistune.create_markdown(renderer=_SafeHtml(), plugins=["strikethrough", "table", "url"])
# The url plugin as for the HTML: a bare URL becomes an explicit link, which no autolink reads on.
_to_markdown = mistune.create_markdown(renderer=_SafeMarkdown(), plugins=["strikethrough", "url"])


def markdown_to_html(text: str) -> str:
    """The agent's Markdown as HTML with nothing it wrote able to become markup or a request."""
    return cast(str, _to_html(text))


def markdown_to_markdown(text: str) -> str:
    """The agent's Markdown again, safe to hand a renderer that lets raw HTML through."""
    return cast(str, _to_markdown(text)).strip()
