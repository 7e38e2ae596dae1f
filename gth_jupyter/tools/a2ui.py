"""``show_a2ui_surface``: the model draws a form or card in the chat (A2UI v0.8, JSONL).

Gaunt Sloth's tool returns its argument unchanged. Ours checks it first, so a model that writes
a broken surface gets a tool error it can act on (which line, which component, what is wrong)
instead of the user getting a blank panel. The surface is returned unchanged when it is valid;
the widget renders it from the tool result.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, Field

from gth_jupyter.contract.surfaces import json_values

KNOWN_MESSAGES = ("surfaceUpdate", "dataModelUpdate", "beginRendering", "deleteSurface")
KNOWN_COMPONENTS = frozenset(
    "Text Image Icon Video AudioPlayer Row Column List Card Tabs Modal Divider Button TextField "
    "CheckBox ChoicePicker MultipleChoice Slider DateTimeInput".split()
)
MAX_SURFACE_CHARS = 200_000

_EXAMPLE = [
    {
        "surfaceUpdate": {
            "surfaceId": "s1",
            "components": [
                {
                    "id": "title",
                    "component": {
                        "Text": {"text": {"literalString": "Sign up"}, "usageHint": "h2"}
                    },
                },
                {
                    "id": "name",
                    "component": {
                        "TextField": {"label": {"literalString": "Name"}, "text": {"path": "/name"}}
                    },
                },
                {
                    "id": "send",
                    "component": {
                        "Button": {
                            "label": {"literalString": "Send"},
                            "action": {
                                "name": "submit",
                                "context": [{"key": "name", "value": {"path": "/name"}}],
                            },
                        }
                    },
                },
                {
                    "id": "root",
                    "component": {
                        "Column": {"children": {"explicitList": ["title", "name", "send"]}}
                    },
                },
            ],
        }
    },
    {"beginRendering": {"surfaceId": "s1", "root": "root"}},
]

DESCRIPTION = "\n".join(
    [
        "Show the user an interactive surface (a form, a card, a list) rendered in the chat.",
        "Pass A2UI v0.8 messages as JSON Lines, one JSON object per line. Line 1 defines the",
        "components:",
        json.dumps(_EXAMPLE[0], separators=(",", ":")),
        "Line 2 starts rendering from the root component:",
        json.dumps(_EXAMPLE[1], separators=(",", ":")),
        "Components: Text (text, usageHint h1/h2/h3/body/caption), Button (label, action.name,",
        "action.context), TextField (label, text path), CheckBox, Slider, DateTimeInput,",
        "ChoicePicker, Image (url), Divider, Card, Row/Column/List (children.explicitList).",
        "When the user presses a button you receive a user message holding JSON with",
        "actionName and context.",
    ]
)


class SurfaceArgs(BaseModel):
    surfaceJsonl: str = Field(description="A2UI v0.8 messages, one JSON object per line.")


def split_json_objects(text: str) -> list[Any]:
    """Newline-separated or concatenated JSON values, as Gaunt Sloth's UI parses them."""
    try:
        return json_values(text)
    except json.JSONDecodeError as exc:
        line = text.count("\n", 0, exc.pos) + 1
        raise ToolException(f"Line {line} is not valid JSON: {exc.msg}.") from None


def _check_component(surface: str, item: Any, index: int) -> str:
    where = f"surfaceUpdate '{surface}' components[{index}]"
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        raise ToolException(f"{where} needs a string 'id'.")
    component = item.get("component")
    if not isinstance(component, dict) or len(component) != 1:
        raise ToolException(
            f"{where} ('{item['id']}') needs 'component' as an object with exactly one type key, "
            'like {"Text": {...}}.'
        )
    kind, props = next(iter(component.items()))
    if kind not in KNOWN_COMPONENTS:
        raise ToolException(
            f"{where} ('{item['id']}') has unknown component type '{kind}'. "
            f"Known types: {', '.join(sorted(KNOWN_COMPONENTS))}."
        )
    if not isinstance(props, dict):
        raise ToolException(f"{where} ('{item['id']}'): the {kind} properties must be an object.")
    return str(item["id"])


def validate_surface(text: str) -> None:
    if not text.strip():
        raise ToolException("surfaceJsonl is empty: send a surfaceUpdate and a beginRendering.")
    if len(text) > MAX_SURFACE_CHARS:
        raise ToolException(f"The surface is over {MAX_SURFACE_CHARS} characters; keep it small.")
    components: dict[str, set[str]] = {}
    roots: list[tuple[str, str]] = []
    for line, message in enumerate(split_json_objects(text), start=1):
        if not isinstance(message, dict) or len(message) != 1:
            raise ToolException(
                f"Message {line} must be an object with one key: {', '.join(KNOWN_MESSAGES)}."
            )
        kind, body = next(iter(message.items()))
        if kind not in KNOWN_MESSAGES:
            raise ToolException(
                f"Message {line} has unknown type '{kind}'; use one of {', '.join(KNOWN_MESSAGES)}."
            )
        if not isinstance(body, dict) or not isinstance(body.get("surfaceId"), str):
            raise ToolException(f"Message {line} ({kind}) needs a string 'surfaceId'.")
        surface = body["surfaceId"]
        if kind == "surfaceUpdate":
            items = body.get("components")
            if not isinstance(items, list) or not items:
                raise ToolException(
                    f"surfaceUpdate '{surface}' needs a non-empty 'components' list."
                )
            ids = components.setdefault(surface, set())
            ids.update(_check_component(surface, item, i) for i, item in enumerate(items))
        elif kind == "beginRendering":
            root = body.get("root")
            if not isinstance(root, str):
                raise ToolException(f"beginRendering '{surface}' needs a string 'root'.")
            roots.append((surface, root))
    if not roots and components:
        raise ToolException("Add a beginRendering line, or the surface is never shown.")
    for surface, root in roots:
        if root not in components.get(surface, set()):
            raise ToolException(
                f"beginRendering '{surface}' names root '{root}', which no surfaceUpdate defines."
            )


def make_a2ui_tool() -> BaseTool:
    def show_a2ui_surface(surfaceJsonl: str) -> str:
        validate_surface(surfaceJsonl)
        return surfaceJsonl

    return StructuredTool.from_function(
        func=show_a2ui_surface,
        name="show_a2ui_surface",
        description=DESCRIPTION,
        args_schema=SurfaceArgs,
        handle_tool_error=lambda exc: f"Invalid A2UI surface: {exc}",
    )
