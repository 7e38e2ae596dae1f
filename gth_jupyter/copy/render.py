"""A ``%gth`` turn as a static copy: what a saved notebook shows where the widget does not run.

The widget view needs a live kernel and a front end that renders widgets. GitHub, nbviewer,
``nbconvert`` (HTML, Markdown, PDF), Jupyter Book and a reopened notebook without its kernel
show the other mimetypes of the same output instead, so each ``%gth`` output also carries:

- ``text/html`` (outer element ``class="gth-static-copy"``) and ``text/markdown``: the prompt,
  the answer, each tool call as a compact card (name, status, short arguments; the data agent's
  tables, ``run_python``'s code, text output and plots), an A2UI surface as one line (its title
  and the values it held), approvals as what was decided, and ``notes`` at the end;
- ``text/plain``: the answer's text.

It holds what the widget's transcript shows, nothing more, and escapes everything the model,
the kernel or the browser wrote (:mod:`.markdown`). A photo the browser took is a
placeholder unless ``save_photos`` (``jupyter.savePhotos``). The three mimetypes together stay
under ``max_bytes`` (:data:`MAX_CELL_BYTES`): long texts are cut in the middle first, then images
that do not fit are made smaller (when Pillow is installed) or left out with a note, and a copy
whose text alone is too long becomes its plain text, cut.

Pure functions: no IPython, no kernel, no network.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..contract.pending import APPROVAL_REASON
from ..contract.usage import sum_accounts, usage_text
from ._blocks import Answer, Block, Card, Image, Line, Note, Prompt, as_list, cut
from ._changes import changes_lines
from ._surfaces import surface_line
from ._tools import ToolCall, tool_card
from .markdown import markdown_to_html, markdown_to_markdown

__all__ = ["COPY_MIMETYPES", "MAX_CELL_BYTES", "render_static_copy", "served_copy", "waiting_copy"]

#: The mimetypes a static copy is written as, beside the widget's view.
COPY_MIMETYPES = ("text/html", "text/markdown", "text/plain")
#: The most a static copy may take, its three mimetypes together (UTF-8 bytes).
MAX_CELL_BYTES = 512 * 1024
#: An answer longer than this is cut in the middle (characters).
ANSWER_CHARS = 60_000
WAITING_TEXT = "waiting for the agent…"
_HTML_OPEN = '<div class="gth-static-copy">'
_A2UI_TOOL = "show_a2ui_surface"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _action(text: str) -> dict[str, Any] | None:
    """An A2UI action the widget sent as the person's message, else None."""
    if not text.startswith("{") or '"actionName"' not in text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and isinstance(value.get("actionName"), str) else None


def _waits(interrupts: Sequence[Any]) -> tuple[dict[str, str], list[Block]]:
    """Which calls wait on what, and a line for each wait that is no call's."""
    by_call: dict[str, str] = {}
    lines: list[Block] = []
    for item in interrupts:
        if not isinstance(item, dict):
            continue
        gth = (
            (item.get("metadata") or {}).get("gth")
            if isinstance(item.get("metadata"), dict)
            else None
        )
        browser = isinstance(gth, dict) and gth.get("clientTool")
        call = item.get("toolCallId")
        kind = "browser" if browser else "approval" if item.get("reason") == APPROVAL_REASON else ""
        if isinstance(call, str) and kind:
            by_call[call] = kind
        message = str(item.get("message") or "")
        if kind == "approval":
            lines.append(Line(message, label="Waiting for approval:"))
        elif not browser:
            lines.append(Line(message or "The agent waits for an answer.", label="Waiting:"))
    return by_call, lines


def _tool_calls(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = message.get("toolCalls") if message.get("role") == "assistant" else None
    return [tc for tc in found if isinstance(tc, dict)] if isinstance(found, list) else []


def _calls(messages: Sequence[Mapping[str, Any]], waits: Mapping[str, str]) -> dict[str, ToolCall]:
    """Every call the messages make, by id, with its result or what it waits on."""
    calls: dict[str, ToolCall] = {}
    for m in messages:
        for tc in _tool_calls(m):
            fn = tc["function"] if isinstance(tc.get("function"), dict) else {}
            call_id = str(tc.get("id", ""))
            name, arguments = str(fn.get("name", "tool")), str(fn.get("arguments") or "")
            calls[call_id] = ToolCall(call_id, name, arguments)
            calls[call_id].waiting = waits.get(call_id, "")
        found = calls.get(str(m.get("toolCallId"))) if m.get("role") == "tool" else None
        if found is not None:
            found.result = _text(m.get("content"))
            found.error = str(m["error"]) if m.get("error") is not None else None
    return calls


def _blocks(
    view: Mapping[str, Any], prompt: str | None, save_photos: bool
) -> tuple[list[Block], list[str]]:
    """The copy's blocks in transcript order, and the answer's text (for text/plain)."""
    messages = [m for m in as_list(view.get("messages")) if isinstance(m, dict)]
    waits, wait_lines = _waits(as_list(view.get("interrupts")))
    calls = _calls(messages, waits)
    actions: dict[str, list[dict[str, Any]]] = {}
    for m in messages:
        if m.get("role") == "user" and (action := _action(_text(m.get("content")))) is not None:
            actions.setdefault(str(action.get("surfaceId", "")), []).append(action)
    blocks: list[Block] = []
    answers: list[str] = []
    if prompt and not any(m.get("role") == "user" for m in messages):
        blocks.append(Prompt(prompt))
    for m in messages:
        role = m.get("role")
        if role == "user":
            text = _text(m.get("content"))
            action = _action(text)
            blocks.append(
                Line(f"▶ {action['actionName']}", cls="gth-copy-action") if action else Prompt(text)
            )
        elif role == "assistant":
            text = _text(m.get("content"))
            if text.strip():
                answers.append(text)
                source = cut(text, ANSWER_CHARS)
                blocks.append(Answer(markdown_to_html(source), markdown_to_markdown(source)))
            for tc in _tool_calls(m):
                call = calls[str(tc.get("id", ""))]
                # A surface shows as its activity; its call only when it failed or is unanswered.
                shown = call.name == _A2UI_TOOL and call.error is None and call.result is not None
                if not shown:
                    blocks.append(tool_card(call, save_photos=save_photos))
        elif role == "activity" and m.get("activityType") == "a2ui-surface":
            content = m.get("content") if isinstance(m.get("content"), dict) else {}
            ops = content.get("a2ui_operations") if isinstance(content, dict) else None
            ops = ops if isinstance(ops, list) else []
            ids = {
                op[k].get("surfaceId")
                for op in ops
                if isinstance(op, dict)
                for k in op
                if isinstance(op[k], dict) and isinstance(op[k].get("surfaceId"), str)
            }
            sent = [a for sid in ids if isinstance(sid, str) for a in actions.get(sid, [])]
            blocks.append(surface_line(ops, sent))
    changed = changes_lines((c.name, c.arguments, c.result) for c in calls.values())
    blocks.extend(Line(line, cls="gth-copy-changes") for line in changed)
    blocks.extend(wait_lines)
    return blocks, answers


def _images(blocks: Sequence[Block]) -> list[Image]:
    found: list[Image] = []
    for b in blocks:
        if isinstance(b, Image):
            found.append(b)
        elif isinstance(b, Card):
            found.extend(p for p in b.parts if isinstance(p, Image))
    return found


def _write(blocks: Sequence[Block], plain: str) -> dict[str, str]:
    html = "\n".join([_HTML_OPEN, *(b.html() for b in blocks), "</div>"])
    markdown = "\n\n".join(b.markdown() for b in blocks)
    return {"text/html": html, "text/markdown": markdown, "text/plain": plain}


def _size(data: Mapping[str, str]) -> int:
    return sum(len(v.encode()) for v in data.values())


def _smaller(url: str, budget: int) -> str | None:
    """The image at ``url`` re-encoded to at most ``budget`` characters of data: URL, when
    Pillow is installed (it is optional: without it an image that does not fit is left out)."""
    try:
        from PIL import Image as PILImage
    except ImportError:
        return None
    head, _, data = url.partition(";base64,")
    try:
        picture: Any = PILImage.open(io.BytesIO(base64.b64decode(data)))
        picture.load()
        fmt, mime = ("PNG", "image/png") if head.endswith("png") else ("JPEG", "image/jpeg")
        if fmt == "JPEG" and picture.mode not in ("RGB", "L"):
            picture = picture.convert("RGB")
        scale = 0.9 * (budget / max(len(url), 1)) ** 0.5
        for _ in range(6):
            size = (max(1, int(picture.width * scale)), max(1, int(picture.height * scale)))
            if size[0] < 48 or size[1] < 48:
                return None
            out = io.BytesIO()
            picture.resize(size).save(out, fmt, optimize=True)
            smaller = f"data:{mime};base64,{base64.b64encode(out.getvalue()).decode()}"
            if len(smaller) <= budget:
                return smaller
            scale *= 0.7
    except Exception:  # a broken image is left out, never a failed copy
        return None
    return None


def _fit_images(blocks: Sequence[Block], plain: str, max_bytes: int) -> None:
    """Keep each image, in order, while the copy fits; shrink or leave out the rest."""
    images = _images(blocks)
    for image in images:
        image.dropped = "-"  # measured without the images first
    room = max_bytes - _size(_write(blocks, plain))
    for image in images:
        # An image stands in the HTML and the Markdown: it costs its URL twice.
        cost = 2 * len(image.url) + 2 * len(image.alt) + 64
        if cost > room:
            smaller = _smaller(image.url, (room - 2 * len(image.alt) - 64) // 2)
            if smaller is not None:
                image.url = smaller
                cost = 2 * len(image.url) + 2 * len(image.alt) + 64
        if cost <= room:
            image.dropped = ""
            room -= cost
        else:
            kib = max_bytes // 1024
            image.dropped = f"{image.alt}: left out, the copy would pass its {kib} KiB cap."


def render_static_copy(
    view: Mapping[str, Any],
    *,
    prompt: str | None = None,
    save_photos: bool = False,
    max_bytes: int = MAX_CELL_BYTES,
    notes: Sequence[str] = (),
    thread_total: bool = False,
) -> dict[str, str]:
    """The static copy of a turn: ``{"text/html", "text/markdown", "text/plain"}``.

    ``view`` is what :func:`gth_jupyter.agui.thread_view` returns (or several merged): its
    ``messages`` and ``interrupts``, and the ``usage`` of its ``turns`` whose messages it holds
    (the copy ends with what they cost). ``prompt`` is shown first when the view holds no
    person's message yet; ``notes`` are lines shown last (a headless run's refusal, say);
    ``thread_total`` adds what the whole conversation has cost so far."""
    blocks, answers = _blocks(view, prompt, save_photos)
    blocks.extend(Note(str(n)) for n in notes if str(n).strip())
    plain = "\n\n".join(answers).strip()
    if not plain:
        used = [b.name for b in blocks if isinstance(b, Card)]
        plain = f"The agent used {', '.join(used)}." if used else "The agent gave no answer."
    accounts = usage_lines(view, thread_total=thread_total)
    blocks.extend(Line(line, cls="gth-copy-usage") for line in accounts)
    # text/plain stays the answer (what a reader of plain text wants); the cost is in the rest.
    plain = "\n\n".join([cut(plain, ANSWER_CHARS), *(str(n) for n in notes if str(n).strip())])
    _fit_images(blocks, plain, max_bytes)
    data = _write(blocks, plain)
    if _size(data) <= max_bytes:
        return data
    return _cut_copy(plain, max_bytes)


def usage_lines(view: Mapping[str, Any], *, thread_total: bool = False) -> list[str]:
    """What the turns shown cost (``1,204 in · 356 out · $0.0041``), and with ``thread_total``
    the conversation's total; none without usage (a server before usage was counted)."""
    shown = {
        str(m.get("id"))
        for m in as_list(view.get("messages"))
        if isinstance(m, dict) and m.get("role") == "user"
    }
    # Each turn once (views merged from several reads of one thread list it again).
    turns = {
        t["messageId"]: t
        for t in as_list(view.get("turns"))
        if isinstance(t, dict) and isinstance(t.get("messageId"), str) and t["messageId"] in shown
    }.values()
    usage, cost = sum_accounts((as_list(t.get("usage")), t.get("cost")) for t in turns)
    lines = [line] if (line := usage_text(usage, cost)) else []
    total = usage_text(as_list(view.get("usage")), view.get("cost")) if thread_total else ""
    if total:
        lines.append(f"This conversation so far: {total}")
    return lines


def served_copy(
    view: Mapping[str, Any], *, turn: str | None, save_photos: bool = False
) -> dict[str, str] | None:
    """The copy of a turn the server ran, rendered from the thread's view the server just read
    (``GET gth/threads/{id}?turn=…&copy=1``): ``None`` when nothing of ``turn`` is on the thread
    (its run was refused), where only the kernel knows the cell's prompt to show."""
    if turn is not None and not as_list(view.get("messages")):
        return None
    earlier = [EARLIER_RUN_TEXT] if view.get("currentBranch") is False else []
    return render_static_copy(view, save_photos=save_photos, notes=earlier)


def _cut_copy(plain: str, max_bytes: int) -> dict[str, str]:
    """A copy whose text alone passes the cap: its plain text, cut until all three forms fit."""
    note = f"Too long to keep in full in the notebook (cap: {max_bytes // 1024} KiB); cut."
    chars = max_bytes // 3
    while True:
        text = cut(plain, chars)
        data = _write([Note(note), Line(text, cls="gth-copy-cut")], f"{note}\n\n{text}")
        if _size(data) <= max_bytes or chars == 0:
            return data
        chars //= 2


#: Said under a turn that is no longer in the conversation (a cell above it ran again).
EARLIER_RUN_TEXT = (
    "From an earlier run: a cell above ran again since, so this turn is no longer in the "
    "conversation the agent sees. Run this cell again to bring it back."
)


def waiting_copy(prompt: str | None) -> dict[str, str]:
    """The copy before the turn ends: the prompt and that the agent has not answered yet."""
    blocks: list[Block] = [Prompt(prompt)] if prompt else []
    blocks.append(Note(WAITING_TEXT))
    return _write(blocks, WAITING_TEXT)
