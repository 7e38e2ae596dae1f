"""The AG-UI mapping's hot path: delta events copied from a validated template."""

from __future__ import annotations

from ag_ui.core import TextMessageContentEvent, ToolCallArgsEvent

from gth_jupyter.agui.mapping import EventMapper
from gth_jupyter.contract.events import TextEvent, ToolStartEvent, with_delta
from gth_jupyter.contract.run import AssistantMessageStart
from gth_jupyter.runs.sse import encode


def test_a_copied_delta_event_equals_a_validated_one() -> None:
    template = TextMessageContentEvent(message_id="m-1", delta="first")
    for delta in ("next", "", "é \\n \\u2028", '"quoted"'):
        copy = with_delta(template, delta)
        validated = TextMessageContentEvent(message_id="m-1", delta=delta)
        assert copy == validated and type(copy) is TextMessageContentEvent
        assert copy.model_dump(by_alias=True) == validated.model_dump(by_alias=True)
        assert encode(copy) == encode(validated)
    assert template.delta == "first"  # the template is left as it was
    args = with_delta(ToolCallArgsEvent(tool_call_id="c", delta="{"), '"a": 1}')
    assert args == ToolCallArgsEvent(tool_call_id="c", delta='"a": 1}')


def test_text_runs_around_a_tool_call_get_their_own_ids_and_deltas() -> None:
    mapper = EventMapper("t", "r")
    events = []
    for item in (
        AssistantMessageStart("a1"),
        TextEvent(delta="Hel"),
        TextEvent(delta="lo"),
        ToolStartEvent(id="c1", name="x"),
        TextEvent(delta="after"),
    ):
        events += list(mapper.map(item))
    shape = [
        (e.type.value, getattr(e, "message_id", None), getattr(e, "delta", None)) for e in events
    ]
    assert shape == [
        ("TEXT_MESSAGE_START", "a1", None),
        ("TEXT_MESSAGE_CONTENT", "a1", "Hel"),
        ("TEXT_MESSAGE_CONTENT", "a1", "lo"),
        ("TEXT_MESSAGE_END", "a1", None),
        ("TOOL_CALL_START", None, None),
        ("TEXT_MESSAGE_START", "a1-2", None),
        ("TEXT_MESSAGE_CONTENT", "a1-2", "after"),
    ]
    assert mapper.text_delta("more") == TextMessageContentEvent(message_id="a1-2", delta="more")
