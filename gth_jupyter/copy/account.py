"""``%gth --usage``: a thread's account as a table, one row per turn, then the total.

Rendered from the thread view (``GET gth/threads/{id}``: each turn's ``usage`` and ``cost``, the
thread's total), as text, Markdown and HTML, escaped like every copy: the prompts are a person's
text, the model names a provider's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..contract.usage import TokenCounts, usd_text
from ._blocks import as_list
from .markdown import md_text

__all__ = ["account_table"]

_PROMPT_CHARS = 48
_HEAD = ("#", "Prompt", "Model", "In", "Out", "Cached", "Cost")


def _counts(usage: Any) -> TokenCounts:
    total = TokenCounts()
    for entry in as_list(usage):
        if isinstance(entry, Mapping):
            total.add(TokenCounts.from_json(entry))
    return total


def _cost(cost: Any) -> str:
    usd = cost.get("usd") if isinstance(cost, Mapping) else None
    if isinstance(usd, int | float) and not isinstance(usd, bool):
        return usd_text(float(usd))
    return "unknown" if isinstance(cost, Mapping) else "-"


def _models(usage: Any) -> str:
    names = [
        str(e.get("model") or e.get("provider") or "?")
        for e in as_list(usage)
        if isinstance(e, Mapping)
    ]
    return ", ".join(dict.fromkeys(names)) or "-"


def _prompt(text: Any) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= _PROMPT_CHARS else flat[: _PROMPT_CHARS - 1] + "…"


def _esc(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def account_table(view: Mapping[str, Any]) -> dict[str, str]:
    """The table as ``{"text/plain", "text/markdown", "text/html"}``."""
    prompts = {
        str(m.get("id")): m.get("content")
        for m in as_list(view.get("messages"))
        if isinstance(m, Mapping) and m.get("role") == "user"
    }
    rows: list[tuple[str, ...]] = []
    for number, turn in enumerate(as_list(view.get("turns")), start=1):
        if not isinstance(turn, Mapping):
            continue
        counts = _counts(turn.get("usage"))
        content = prompts.get(str(turn.get("messageId")))
        rows.append(
            (
                str(number),
                _prompt(content if isinstance(content, str) else ""),
                _models(turn.get("usage")),
                f"{counts.input:,}",
                f"{counts.output:,}",
                f"{counts.cached_input:,}",
                _cost(turn.get("cost")),
            )
        )
    total = _counts(view.get("usage"))
    footer = (
        "",
        "Total (every branch)",
        _models(view.get("usage")),
        f"{total.input:,}",
        f"{total.output:,}",
        f"{total.cached_input:,}",
        _cost(view.get("cost")),
    )
    if not rows and not total:
        note = "No turns on this thread have reported usage yet."
        return {
            "text/plain": note,
            "text/markdown": f"*{note}*",
            "text/html": f"<p><em>{note}</em></p>",
        }
    table = [_HEAD, *rows, footer]
    widths = [max(len(r[i]) for r in table) for i in range(len(_HEAD))]
    plain = "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in table)
    md_rows = [
        "| " + " | ".join(md_text(c, inline=True) for c in r) + " |"  # "|" escaped too
        for r in table
    ]
    md_rows.insert(1, "|" + "|".join(["---", "---", "---", "--:", "--:", "--:", "--:"]) + "|")

    def cells(row: tuple[str, ...], tag: str) -> str:
        return "".join(f"<{tag}>{_esc(c)}</{tag}>" for c in row)

    page = (
        '<table class="gth-usage-table"><thead><tr>'
        + cells(_HEAD, "th")
        + "</tr></thead><tbody>"
        + "".join(f"<tr>{cells(r, 'td')}</tr>" for r in rows)
        + f"</tbody><tfoot><tr>{cells(footer, 'th')}</tr></tfoot></table>"
    )
    return {"text/plain": plain, "text/markdown": "\n".join(md_rows), "text/html": page}
