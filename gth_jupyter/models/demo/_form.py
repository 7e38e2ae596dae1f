"""The sign-up form the demo model shows with ``show_a2ui_surface``: A2UI v0.8 JSONL.

Two lines, as Gaunt Sloth's tool description teaches: a ``surfaceUpdate`` with every component,
then ``beginRendering`` naming the root. The text fields bind their values to ``/name`` and
``/email`` in the surface's data model, and the Submit button's action sends both back as its
context. The Button keeps Gaunt Sloth's ``label`` (the v0.8 catalog would want a ``child`` id).
"""

from __future__ import annotations

import json
from typing import Any

SURFACE_ID = "demo_signup"
ROOT_ID = "root"
SUBMIT_ACTION = "submit_form"


def _text_field(component_id: str, label: str, path: str) -> dict[str, Any]:
    return {
        "id": component_id,
        "component": {
            "TextField": {
                "label": {"literalString": label},
                "text": {"path": path},
                "textFieldType": "shortText",
            }
        },
    }


def demo_form_messages() -> list[dict[str, Any]]:
    """The form's A2UI v0.8 server-to-client messages, in order."""
    components: list[dict[str, Any]] = [
        {
            "id": ROOT_ID,
            "component": {
                "Column": {"children": {"explicitList": ["title", "name", "email", "submit"]}}
            },
        },
        {
            "id": "title",
            "component": {
                "Text": {"text": {"literalString": "Sign up for updates"}, "usageHint": "h2"}
            },
        },
        _text_field("name", "Name", "/name"),
        _text_field("email", "Email", "/email"),
        {
            "id": "submit",
            "component": {
                "Button": {
                    "label": {"literalString": "Submit"},
                    "primary": True,
                    "action": {
                        "name": SUBMIT_ACTION,
                        "context": [
                            {"key": "name", "value": {"path": "/name"}},
                            {"key": "email", "value": {"path": "/email"}},
                        ],
                    },
                }
            },
        },
    ]
    return [
        {"surfaceUpdate": {"surfaceId": SURFACE_ID, "components": components}},
        {"beginRendering": {"surfaceId": SURFACE_ID, "root": ROOT_ID}},
    ]


def demo_form_jsonl() -> str:
    """The form as JSONL: one JSON object per line, the ``surfaceJsonl`` argument."""
    return "\n".join(json.dumps(message) for message in demo_form_messages())
