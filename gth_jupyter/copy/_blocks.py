"""The pieces a static copy is made of, each written out as HTML and as Markdown.

A turn becomes a list of blocks (a prompt, an answer, a tool card holding lines, code, tables
and images, a note); each block writes itself both ways, so the two copies never differ in what
they say. Everything here escapes what it is given except :class:`Answer`, whose HTML and
Markdown come already made safe from :mod:`.markdown`. No style is needed to read the
result: GitHub strips ``style`` attributes, so structure (headings in bold, quotes, tables,
``<pre>``) carries it; the few inline styles only tidy it where they are kept.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .markdown import md_code, md_code_span, md_text

__all__ = [
    "Answer",
    "Block",
    "Card",
    "Code",
    "Image",
    "Line",
    "Note",
    "Prompt",
    "Table",
    "as_list",
    "cell_text",
    "cut",
    "js_number",
    "json_object",
]

_CARD_STYLE = "border-left:3px solid #8888;padding:2px 0 2px 10px;margin:6px 0"
_IMG_STYLE = "max-width:100%"
_PRE_STYLE = "background:#8881;padding:6px;overflow-x:auto"


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


class Block:
    """One piece of the copy."""

    def html(self) -> str:
        raise NotImplementedError

    def markdown(self) -> str:
        raise NotImplementedError


@dataclass
class Prompt(Block):
    """What the person asked (shown as plain text, never as Markdown)."""

    text: str

    def html(self) -> str:
        lines = "<br>\n".join(_esc(line) for line in self.text.splitlines() or [""])
        return f'<p class="gth-copy-prompt"><strong>You:</strong> {lines}</p>'

    def markdown(self) -> str:
        return f"**You:** {md_text(self.text)}"


@dataclass
class Answer(Block):
    """The agent's text, as :mod:`.markdown` made it safe both ways."""

    safe_html: str
    safe_markdown: str

    def html(self) -> str:
        return f'<div class="gth-copy-answer">\n{self.safe_html}</div>'

    def markdown(self) -> str:
        return self.safe_markdown


@dataclass
class Line(Block):
    """A line of plain text; ``label`` (bold) before it, ``code`` set in monospace after."""

    text: str
    label: str = ""
    code: str = ""
    cls: str = "gth-copy-line"

    def html(self) -> str:
        parts = [f"<strong>{_esc(self.label)}</strong>"] if self.label else []
        if self.text:
            parts.append(_esc(self.text))
        if self.code:
            parts.append(f"<code>{_esc(self.code)}</code>")
        return f'<p class="{self.cls}">{" ".join(parts)}</p>'

    def markdown(self) -> str:
        parts = [f"**{md_text(self.label, inline=True)}**"] if self.label else []
        if self.text:
            parts.append(md_text(self.text, inline=True))
        if self.code:
            parts.append(md_code_span(self.code))
        return " ".join(parts)


@dataclass
class Note(Block):
    """A remark of ours (a placeholder, a cap, how to allow a refused call), in italics."""

    text: str

    def html(self) -> str:
        return f'<p class="gth-copy-note"><em>{_esc(self.text)}</em></p>'

    def markdown(self) -> str:
        return f"*{md_text(self.text, inline=True)}*"


@dataclass
class Code(Block):
    """Code or output, shown as written."""

    text: str
    language: str = ""
    cls: str = "gth-copy-pre"

    def html(self) -> str:
        lang = f' class="language-{_esc(self.language)}"' if self.language else ""
        code = f"<code{lang}>{_esc(self.text)}</code>"
        return f'<pre class="{self.cls}" style="{_PRE_STYLE}">{code}</pre>'

    def markdown(self) -> str:
        return md_code(self.text, self.language)


@dataclass
class Table(Block):
    """A plain table of text cells; ``caption`` above it."""

    head: Sequence[str]
    rows: Sequence[Sequence[str]]
    caption: str = ""

    def html(self) -> str:
        cap = f"<caption>{_esc(self.caption)}</caption>" if self.caption else ""
        head = "".join(f"<th>{_esc(h)}</th>" for h in self.head)
        body = "".join(
            "<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>\n" for row in self.rows
        )
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>"

    def markdown(self) -> str:
        def row(cells: Sequence[str]) -> str:
            return "| " + " | ".join(md_text(c, inline=True) or " " for c in cells) + " |"

        lines = [row(self.head), "|" + "---|" * len(self.head), *(row(r) for r in self.rows)]
        table = "\n".join(lines)
        return f"*{md_text(self.caption, inline=True)}*\n\n{table}" if self.caption else table


@dataclass
class Image(Block):
    """An image as an inline ``data:`` URL (already checked by ``inline_image_url``).

    The size cap decides afterwards whether it stays: ``dropped`` replaces it by that note."""

    url: str
    alt: str
    dropped: str = ""

    def html(self) -> str:
        if self.dropped:
            return Note(self.dropped).html()
        return f'<p><img src="{_esc(self.url)}" alt="{_esc(self.alt)}" style="{_IMG_STYLE}" /></p>'

    def markdown(self) -> str:
        if self.dropped:
            return Note(self.dropped).markdown()
        return f"![{md_text(self.alt, inline=True)}]({self.url})"


@dataclass
class Card(Block):
    """A tool call: its name and status, short arguments, and what it showed."""

    name: str
    status: str
    args: str = ""
    parts: list[Block] = field(default_factory=list)

    def html(self) -> str:
        head = Line(
            f"· {self.status}", label=f"Tool: {self.name}", code=self.args, cls="gth-copy-tool-head"
        )
        inner = "\n".join([head.html(), *(p.html() for p in self.parts)])
        return f'<blockquote class="gth-copy-tool" style="{_CARD_STYLE}">\n{inner}\n</blockquote>'

    def markdown(self) -> str:
        head = Line(f"· {self.status}", label=f"Tool: {self.name}", code=self.args).markdown()
        # Not in a quote, as the HTML card is: renderers differ on tables inside quotes (mistune,
        # which nbconvert uses, leaves them as text); the bold tool line starts the card.
        return "\n\n".join([head, *(p.markdown() for p in self.parts)])


def cut(text: str, limit: int) -> str:
    """``text`` with its middle left out past ``limit`` characters (head and tail kept)."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    left = len(text) - head - tail
    return f"{text[:head]}\n… ({left} characters not shown) …\n{text[-tail:]}"


def cell_text(value: Any) -> str:
    """A value as a table cell shows it: None as "null", objects as JSON; written as the
    widget's cells write them (JavaScript's ``String`` and ``JSON.stringify``: ``true``, ``1``
    for ``1.0``, no spaces)."""
    if value is None:
        return "null"
    if isinstance(value, (dict, list)):
        return json.dumps(_js_numbers(value), ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return js_number(value)
    return str(value)


def js_number(value: float) -> str:
    """A float as JavaScript writes a number (``Number.prototype.toString``): the same shortest
    digits as ``repr``, a whole number without ``.0``, exponents only past 1e21 and below 1e-6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # where the decimal point falls after the digits' start
    k = len(text)
    if k <= point <= 21:
        out = text + "0" * (point - k)
    elif 0 < point <= 21:
        out = f"{text[:point]}.{text[point:]}"
    elif -6 < point <= 0:
        out = f"0.{'0' * -point}{text}"
    else:
        e = point - 1
        out = f"{text[0]}{'.' + text[1:] if k > 1 else ''}e{'+' if e >= 0 else '-'}{abs(e)}"
    return f"-{out}" if sign else out


def _js_numbers(value: Any) -> Any:
    """``value`` with whole floats as ints, so that JSON writes them as JavaScript does."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [_js_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _js_numbers(v) for k, v in value.items()}
    return value


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one: what a page or a model sent may have any
    shape, and a copy of a malformed part shows less, it never fails."""
    return value if isinstance(value, list) else []


def json_object(text: str | None) -> dict[str, Any] | None:
    """A JSON object given as text (a tool's arguments or result); ``None`` for anything else."""
    if not text or not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
