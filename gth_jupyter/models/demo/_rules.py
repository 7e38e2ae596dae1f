"""What the offline demo model answers: a few rules on the last message of the conversation.

- a request for a photo calls ``capture_image`` (when bound), a request for a form calls
  ``show_a2ui_surface`` (when bound);
- a data phrase ("what data do I have?", "describe sales", "plot revenue by month") calls the
  notebook kernel's tools (when bound); their phrases and follow-ups live in ``_data``;
- a notebook phrase ("why did this fail?", "put that in a cell") calls the browser's notebook
  tools (when bound); they live in ``_notebook``;
- a tool's result, or the image the image middleware injected, gets a short follow-up;
- an A2UI user action (a user message holding ``{"actionName": ...}``) is acknowledged;
- naming any other bound tool calls it, with ``key=value`` pairs from the text as arguments
  (how the teaching notebook drives a tool defined in a cell);
- anything else gets the introduction: what the demo can do and how to configure a real model.

Tools are only ever called in answer to a user message, so the agent loop always ends. The rules
never raise: any surprise in the history falls back to the introduction.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from gth_jupyter.contract.names import NOTEBOOK_TOOLS
from gth_jupyter.models._reply import PlannedToolCall, Reply
from gth_jupyter.models.demo._data import (
    DATA_TOOLS,
    RUN_PYTHON,
    Seen,
    data_follow_up,
    data_request,
    plot_shown,
)
from gth_jupyter.models.demo._form import demo_form_jsonl
from gth_jupyter.models.demo._notebook import INSERT_CELL, notebook_follow_up, notebook_request

CAPTURE_IMAGE = "capture_image"
#: Said after an inserted cell's plot reached the model as an image.
PLOTTED_CELL = (
    "Its plot is in the cell's output, and it reached me as an image (the "
    "`frontend-image-injection` middleware), so a vision model could talk about it."
)
SHOW_SURFACE = "show_a2ui_surface"

_PHOTO = re.compile(
    r"\b(photo|photograph|picture|pic|camera|webcam|selfie|snapshot)s?\b"
    r"|what (do|can) you see|look at me",
    re.IGNORECASE,
)
_FORM = re.compile(r"\b(form|survey|sign[ -]?up|feedback|questionnaire)s?\b", re.IGNORECASE)
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]{64,}$")

REAL_MODEL_CONFIG = '{"llm": {"type": "anthropic", "model": "claude-sonnet-4-5"}}'
VISION_MODEL_CONFIG = (
    '{\n  "llm": {"type": "anthropic", "model": "claude-sonnet-4-5"},\n'
    '  "middleware": ["frontend-image-injection"]\n}'
)
_INSTALL = (
    "and install its provider: `pip install 'gth-jupyter[anthropic]'` "
    "(there are also `openai`, `ollama` and `google` extras)."
)

INTRODUCTION = (
    "Hi! I'm **gth-demo**, the offline demo model: no AI service is connected, so I answer "
    "with a few simple rules.\n\n"
    "Things to try:\n\n"
    '- **"take a photo"**: I call the `capture_image` tool and your webcam takes a picture.\n'
    '- **"show me a form"**: I call `show_a2ui_surface` and a small form appears.\n'
    '- **"what data do I have?"**, **"describe sales"**, **"plot revenue by month"**: in a '
    "notebook I look at your kernel's variables (`list_variables`, `describe_variable`) and "
    "plot with `run_python`, once you approve the code.\n"
    '- **"why did this fail?"**, **"put that in a cell"**: in JupyterLab or Notebook 7 I read '
    "the notebook (`read_notebook`) and explain a failing cell, or insert and run the last code "
    "as a cell of its own (`insert_cell`).\n"
    "- anything else: you get this answer, streamed word by word.\n\n"
    "To use a real model, create `.gsloth.config.json` next to your notebook:\n\n"
    f"```json\n{REAL_MODEL_CONFIG}\n```\n\n"
    f"{_INSTALL} Set your key in `ANTHROPIC_API_KEY`."
)


def plan_demo_reply(messages: Sequence[BaseMessage], tool_names: Sequence[str]) -> Reply:
    """The demo's answer to ``messages`` with ``tool_names`` bound; never raises."""
    try:
        return _plan(list(messages), set(tool_names))
    except Exception:
        return Reply(text=INTRODUCTION)


def _plan(messages: list[BaseMessage], tools: set[str]) -> Reply:
    if not messages:
        return Reply(text=INTRODUCTION)
    last = messages[-1]
    if isinstance(last, ToolMessage):
        name = _tool_name(last, messages)
        if name in NOTEBOOK_TOOLS:
            failed = last.status == "error"
            return notebook_follow_up(name, text_of(last.content), failed=failed)
        if name in DATA_TOOLS:
            failed = last.status == "error"
            return data_follow_up(name, text_of(last.content), failed=failed, tools=tools)
        return _after_tool(last, name)
    if isinstance(last, HumanMessage):
        answered = _answered_tool(messages) if _image_in(last.content) is not None else None
        # The plot the image middleware showed the model belongs to the tool that drew it.
        if answered is not None and _tool_name(answered, messages) == RUN_PYTHON:
            return plot_shown()
        if answered is not None and _tool_name(answered, messages) == INSERT_CELL:
            text = text_of(answered.content)
            done = notebook_follow_up(INSERT_CELL, text, failed=answered.status == "error")
            return Reply(text=f"{done.text}\n\n{PLOTTED_CELL}")
        return _after_user(last, tools, _seen(messages), messages)
    return Reply(text=INTRODUCTION)


def _answered_tool(messages: list[BaseMessage]) -> ToolMessage | None:
    """The tool result just before the trailing user messages holding images."""
    for earlier in reversed(messages[:-1]):
        if isinstance(earlier, ToolMessage):
            return earlier
        if not (isinstance(earlier, HumanMessage) and _image_in(earlier.content) is not None):
            return None
    return None


def _seen(messages: list[BaseMessage]) -> Seen:
    results: list[tuple[str, str]] = []
    users: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            name = _tool_name(message, messages)
            if name in DATA_TOOLS:
                results.append((name, text_of(message.content)))
        elif isinstance(message, HumanMessage):
            users.append(text_of(message.content))
    return Seen(results=results, user_texts=users)


def _after_user(
    message: HumanMessage, tools: set[str], seen: Seen, messages: list[BaseMessage]
) -> Reply:
    image = _image_in(message.content)
    if image is not None:
        return _photo_received(*image, as_image=True)
    text = text_of(message.content).strip()
    if text.startswith("Camera unavailable:"):
        return _camera_unavailable(text.removeprefix("Camera unavailable:").strip())
    action = _user_action(text)
    if action is not None:
        return _action_received(action)
    notebook = notebook_request(text, tools, messages)
    if notebook is not None:
        return notebook
    data = data_request(text, tools, seen)
    if data is not None:
        return data
    named = _named_tool(text, tools)
    if named is not None:
        return Reply(
            text=f"Calling your `{named}` tool.",
            tool_calls=[PlannedToolCall(named, _arguments(text))],
        )
    if _PHOTO.search(text):
        if CAPTURE_IMAGE in tools:
            return Reply(
                text="Sure, let me take a photo with your webcam.",
                tool_calls=[PlannedToolCall(CAPTURE_IMAGE, {})],
            )
        return Reply(
            text="I'd take a photo, but the `capture_image` tool only exists in the notebook chat "
            "widget, where your browser's webcam takes the picture. Open the chat with `%gth` "
            "in a notebook and ask again."
        )
    if _FORM.search(text):
        if SHOW_SURFACE in tools:
            return Reply(
                text="Here comes a short sign-up form.",
                tool_calls=[PlannedToolCall(SHOW_SURFACE, {"surfaceJsonl": demo_form_jsonl()})],
            )
        return Reply(
            text="I'd show you a form, but the `show_a2ui_surface` tool isn't enabled for this "
            'agent. Add `"builtInTools": ["show_a2ui_surface"]` to `.gsloth.config.json` and '
            "ask again."
        )
    return Reply(text=INTRODUCTION)


_ARGUMENT = re.compile(r"\b([A-Za-z_]\w*)=(\"[^\"]*\"|\S+)")


def _named_tool(text: str, tools: set[str]) -> str | None:
    """A bound tool the user names, other than the two the rules above handle."""
    for name in sorted(tools - {CAPTURE_IMAGE, SHOW_SURFACE}):
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            return name
    return None


def _arguments(text: str) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for key, raw in _ARGUMENT.findall(text):
        raw = raw.rstrip(".,;")
        try:
            args[key] = json.loads(raw)
        except ValueError:
            args[key] = raw
    return args


def _after_tool(message: ToolMessage, name: str | None) -> Reply:
    if name == SHOW_SURFACE:
        return Reply(text="Here is the form. Fill it in and press Submit.")
    text = text_of(message.content)
    if name != CAPTURE_IMAGE:
        shown = text if len(text) <= 200 else text[:200] + "…"
        return Reply(text=f"The `{name or 'tool'}` tool answered:\n\n```\n{shown}\n```")
    image = _image_in(message.content)
    if image is not None:
        return _photo_received(*image, as_image=True)
    envelope = _json_object(text)
    if envelope is not None and "error" in envelope:
        return _camera_unavailable(str(envelope["error"]))
    if envelope is not None and ("mimeType" in envelope or "data" in envelope):
        data = _str_or_none(envelope.get("data"))
        return _photo_received(_str_or_none(envelope.get("mimeType")), _kb(data), data)
    # The image middleware's placeholder: the photo itself follows as an image block.
    return _photo_received(None, None, as_image=text.startswith("[image captured"))


def _photo_received(
    mime_type: str | None, size_kb: int | None, data: str | None = None, *, as_image: bool = False
) -> Reply:
    """What the demo can say of a photo: that it arrived and how (an image block, which is what a
    vision model sees, or only as text in the tool's result), never what it shows."""
    size = _pixels(data)
    details = [p for p in (mime_type, size, f"about {size_kb} KB" if size_kb else None) if p]
    what = f"a photo ({', '.join(details)})" if details else "a photo"
    if as_image:
        return Reply(
            text=f"I received {what}, and it reached me **as an image**, the way a vision model "
            "receives it (the `frontend-image-injection` middleware is on).\n\n"
            "I'm the offline demo, though: I can't see what a picture shows, so I can't describe "
            "it. With a vision model as `llm` in `.gsloth.config.json`, this same photo would be "
            "described:\n\n"
            f"```json\n{REAL_MODEL_CONFIG}\n```\n\n{_INSTALL}"
        )
    return Reply(
        text=f"I received {what}, but only as text in the tool's result, not as an image. "
        "I'm the offline demo and can't describe pictures anyway; a vision model needs the "
        "`frontend-image-injection` middleware to receive the photo as an image, and a vision "
        "model as `llm` in `.gsloth.config.json`:\n\n"
        f"```json\n{VISION_MODEL_CONFIG}\n```\n\n{_INSTALL}"
    )


def _pixels(data: str | None) -> str | None:
    """ "WxH px" of a base64 PNG or JPEG, read from its header; None when it is neither."""
    if not data:
        return None
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        width, height = struct.unpack(">II", raw[16:24])
        return f"{width}x{height} px"
    i = 2 if raw[:2] == b"\xff\xd8" else len(raw)
    while i + 9 < len(raw):  # JPEG: walk the segments to the frame header (SOF0..SOF15)
        if raw[i] != 0xFF:
            return None
        marker, length = raw[i + 1], struct.unpack(">H", raw[i + 2 : i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[i + 5 : i + 9])
            return f"{width}x{height} px"
        i += 2 + length
    return None


def _camera_unavailable(reason: str) -> Reply:
    why = f": {reason.rstrip('.')}." if reason else "."
    return Reply(
        text=f"The camera was unavailable{why} Check that the browser may use the webcam "
        "(and that no other app holds it), then ask again."
    )


def _action_received(action: Mapping[str, Any]) -> Reply:
    name = str(action.get("actionName") or "action")
    values = _context_items(action.get("context"))
    if not values:
        return Reply(text=f"Thanks! I received your `{name}` action, with no values filled in.")
    lines = "\n".join(f"- **{key}**: {value}" for key, value in values)
    return Reply(text=f"Thanks! I received your `{name}` action with:\n\n{lines}")


def _context_items(context: object) -> list[tuple[str, str]]:
    pairs: list[tuple[object, object]] = []
    if isinstance(context, Mapping):
        pairs = list(context.items())
    elif isinstance(context, list):
        pairs = [(i.get("key"), i.get("value")) for i in context if isinstance(i, Mapping)]
    return [(_one_line(k), _one_line(v)) for k, v in pairs if k is not None]


def _one_line(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split()) or "(empty)"


def _user_action(text: str) -> Mapping[str, Any] | None:
    data = _json_object(text)
    return data if data is not None and "actionName" in data else None


def _tool_name(message: ToolMessage, history: list[BaseMessage]) -> str | None:
    if message.name:
        return message.name
    for earlier in reversed(history):
        if isinstance(earlier, AIMessage):
            for call in earlier.tool_calls:
                if call.get("id") == message.tool_call_id:
                    return call.get("name")
    return None


def text_of(content: object) -> str:
    """The text of a message's content, whether a string or a list of blocks."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
    return "".join(parts)


def _image_in(content: object) -> tuple[str | None, int | None, str | None] | None:
    """(mime type, size in KB, base64 data) of the first image block in ``content``, if any."""
    if not isinstance(content, list):
        return None
    for block in content:
        if not isinstance(block, Mapping) or block.get("type") not in ("image", "image_url"):
            continue
        source = block.get("source")
        if isinstance(source, Mapping):  # Anthropic's native block
            data = source.get("data")
            return _str_or_none(source.get("media_type")), _kb(data), _str_or_none(data)
        url = block.get("image_url", block.get("url"))
        url = url.get("url") if isinstance(url, Mapping) else url
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            header, data = url[5:].split(";base64,", 1)
            return header or None, _kb(data), data
        mime = block.get("mime_type", block.get("mimeType"))
        data = block.get("data", block.get("base64"))
        return _str_or_none(mime), _kb(data), _str_or_none(data)
    return None


def _kb(data: object) -> int | None:
    if not isinstance(data, str) or not _BASE64.match(data):
        return None
    return max(1, round(len(data) * 3 / 4 / 1024))


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
