"""show_a2ui_surface: valid surfaces pass through unchanged; broken ones are tool errors."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import ToolMessage

from gth_jupyter.tools.a2ui import DESCRIPTION, make_a2ui_tool, split_json_objects

TEXT = {"id": "t", "component": {"Text": {"text": {"literalString": "Hi"}}}}
GOOD = "\n".join(
    [
        json.dumps({"surfaceUpdate": {"surfaceId": "s", "components": [TEXT]}}),
        json.dumps({"beginRendering": {"surfaceId": "s", "root": "t"}}),
    ]
)


def call(surface: str) -> ToolMessage:
    tool = make_a2ui_tool()
    result = tool.invoke(
        {
            "type": "tool_call",
            "id": "c",
            "name": "show_a2ui_surface",
            "args": {"surfaceJsonl": surface},
        }
    )
    assert isinstance(result, ToolMessage)
    return result


def test_a_valid_surface_is_returned_unchanged() -> None:
    result = call(GOOD)
    assert result.status == "success" and result.content == GOOD


def test_concatenated_objects_parse_like_newline_separated_ones() -> None:
    assert len(split_json_objects(GOOD.replace("\n", ""))) == 2


@pytest.mark.parametrize(
    ("surface", "hint"),
    [
        ("", "empty"),
        ("{not json", "Line 1 is not valid JSON"),
        ('{"paint": {"surfaceId": "s"}}', "unknown type 'paint'"),
        (
            json.dumps(
                {
                    "surfaceUpdate": {
                        "surfaceId": "s",
                        "components": [{"id": "x", "component": {"Blink": {}}}],
                    }
                }
            ),
            "unknown component type 'Blink'",
        ),
        (json.dumps({"surfaceUpdate": {"surfaceId": "s", "components": [TEXT]}}), "beginRendering"),
        (GOOD.replace('"root": "t"', '"root": "nope"'), "root 'nope'"),
    ],
)
def test_broken_surfaces_are_errors_the_model_can_act_on(surface: str, hint: str) -> None:
    result = call(surface)
    assert result.status == "error" and hint in result.content


def test_the_description_teaches_both_lines() -> None:
    assert "surfaceUpdate" in DESCRIPTION and "beginRendering" in DESCRIPTION
    for line in DESCRIPTION.splitlines():
        if line.startswith("{"):
            json.loads(line)
