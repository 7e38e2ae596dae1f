"""The tools a headless ``%gth`` turn declares, as a chat widget would with a browser.

A widget declares its browser tools itself (their specs live in ``js/src/tools/``); a headless
run declares the same ones (:data:`BROWSER_TOOLS`, kept equal to the widget's by
``tests/notebook/test_headless_tools.py``) and this kernel's ``client_tool``s, so the model sees
the same tools with or without a browser. Their calls are answered by ``_answers``.
"""

from __future__ import annotations

from typing import Any

import ag_ui.core as agui

from ..host import client_tools

__all__ = ["BROWSER_TOOLS", "declared_tools"]

#: The browser tools a chat widget declares itself (their specs live in ``js/src/tools/``);
#: declared here the same way, so the model sees the same tools with or without a browser.
BROWSER_TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "capture_image",
        "description": "Take a photo with the user's webcam and return it as a JPEG image. The "
        "browser asks the user for camera permission; the camera is switched off right after "
        "the photo.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
    {
        "name": "ask_user",
        "description": "Ask the user a question in the chat and wait for the answer. Give "
        "`choices` for a multiple-choice question (shown as buttons); leave it out for a "
        "free-text answer.",
        "parameters": {
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to show."},
                "choices": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Optional answers to pick from.",
                },
            },
            "required": ["question"],
        },
    },
    {
        "name": "browser_context",
        "description": "Read the user's browser settings: locale, time zone, viewport size and "
        "light/dark colour scheme. Use it before formatting dates, numbers or layouts for this "
        "user.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
)


def declared_tools() -> list[agui.Tool]:
    """What a widget with no notebook front end declares: the built-in browser tools and the
    ``client_tool``s registered in this kernel (a registered one replaces a built-in)."""
    specs = {spec["name"]: spec for spec in BROWSER_TOOLS}
    for spec in client_tools.registered_tools():
        specs[spec["name"]] = spec
    return [
        agui.Tool(
            name=spec["name"],
            description=str(spec.get("description") or ""),
            parameters=spec.get("parameters") or {"type": "object", "properties": {}},
        )
        for spec in specs.values()
    ]
