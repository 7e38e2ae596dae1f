"""LangGraph stream items → AgentStreamEvent, without a graph."""

from __future__ import annotations

from langchain_core.messages import AIMessageChunk, ToolMessage
from langgraph.types import Interrupt

from gth_jupyter.agent.stream import StreamTranslator
from gth_jupyter.contract.events import (
    ReasoningDeltaEvent,
    ReasoningEndEvent,
    ReasoningStartEvent,
    TextEvent,
    ToolArgsEvent,
    ToolEndEvent,
    ToolOutputEvent,
    ToolResultEvent,
    ToolStartEvent,
    dump_agent_stream_event,
    parse_agent_stream_event,
)
from gth_jupyter.contract.messages import public_message_id
from gth_jupyter.contract.run import AssistantMessageStart, ToolResultMessage

META: dict[str, object] = {"langgraph_node": "model"}


def feed_all(translator: StreamTranslator, items: list[tuple[str, object]]) -> list[object]:
    out: list[object] = []
    for mode, data in items:
        out.extend(translator.feed(mode, data))
    return out


def test_text_tokens_become_text_events_under_one_message_id() -> None:
    t = StreamTranslator()
    out = feed_all(
        t,
        [
            ("messages", (AIMessageChunk(content="Hel", id="lc_run--abc"), META)),
            ("messages", (AIMessageChunk(content="lo", id="lc_run--abc"), META)),
        ],
    )
    assert out == [AssistantMessageStart("abc"), TextEvent(delta="Hel"), TextEvent(delta="lo")]


def test_public_message_id_strips_langchain_run_prefix_only() -> None:
    assert public_message_id("lc_run--1234") == "1234"
    assert public_message_id("msg_1") == "msg_1"
    assert public_message_id(None) is None


def test_tool_call_chunks_stream_start_args_and_end_on_node_update() -> None:
    t = StreamTranslator()
    first = AIMessageChunk(
        content="",
        id="m1",
        tool_call_chunks=[{"name": "add", "args": "", "id": "c1", "index": 0}],
    )
    rest = AIMessageChunk(
        content="",
        id="m1",
        tool_call_chunks=[{"name": None, "args": '{"a": 1}', "id": None, "index": 0}],
    )
    out = feed_all(
        t,
        [("messages", (first, META)), ("messages", (rest, META)), ("updates", {"model": {}})],
    )
    assert out == [
        AssistantMessageStart("m1"),
        ToolStartEvent(id="c1", name="add"),
        ToolArgsEvent(id="c1", delta='{"a": 1}'),
        ToolEndEvent(id="c1"),
    ]


def test_two_parallel_calls_are_tracked_by_index() -> None:
    t = StreamTranslator()
    chunks = [
        AIMessageChunk(
            content="", id="m", tool_call_chunks=[{"name": "a", "args": "", "id": "x", "index": 0}]
        ),
        AIMessageChunk(
            content="", id="m", tool_call_chunks=[{"name": "b", "args": "", "id": "y", "index": 1}]
        ),
        AIMessageChunk(
            content="",
            id="m",
            tool_call_chunks=[{"name": None, "args": "{}", "id": None, "index": 0}],
        ),
        AIMessageChunk(
            content="",
            id="m",
            tool_call_chunks=[{"name": None, "args": "[1]", "id": None, "index": 1}],
        ),
    ]
    out = feed_all(t, [("messages", (c, META)) for c in chunks])
    out += list(t.close_message())
    assert ToolArgsEvent(id="x", delta="{}") in out
    assert ToolArgsEvent(id="y", delta="[1]") in out
    assert {e.id for e in out if isinstance(e, ToolEndEvent)} == {"x", "y"}


def test_reasoning_opens_and_closes_before_text() -> None:
    t = StreamTranslator()
    out = feed_all(
        t,
        [
            (
                "messages",
                (
                    AIMessageChunk(
                        content=[{"type": "reasoning", "reasoning": "hmm", "index": 0}], id="m"
                    ),
                    META,
                ),
            ),
            (
                "messages",
                (
                    AIMessageChunk(content=[{"type": "text", "text": "Hi", "index": 1}], id="m"),
                    META,
                ),
            ),
        ],
    )
    assert out == [
        AssistantMessageStart("m"),
        ReasoningStartEvent(),
        ReasoningDeltaEvent(delta="hmm"),
        ReasoningEndEvent(),
        TextEvent(delta="Hi"),
    ]


def test_reasoning_content_in_additional_kwargs_is_read() -> None:
    t = StreamTranslator()
    chunk = AIMessageChunk(content="", additional_kwargs={"reasoning_content": "think"}, id="m")
    out = feed_all(t, [("messages", (chunk, META))])
    assert ReasoningDeltaEvent(delta="think") in out


def test_tool_message_gives_result_with_its_message_id_and_error_flag() -> None:
    t = StreamTranslator()
    ok = ToolMessage(content="3", tool_call_id="c1", id="tm1")
    bad = ToolMessage(content="boom", tool_call_id="c2", id="tm2", status="error")
    out = feed_all(t, [("messages", (ok, META)), ("messages", (bad, META))])
    assert out == [
        ToolResultMessage("tm1", "c1"),
        ToolResultEvent(id="c1", content="3"),
        ToolResultMessage("tm2", "c2"),
        ToolResultEvent(id="c2", content="boom", isError=True),
    ]


def test_non_string_tool_content_is_serialised() -> None:
    t = StreamTranslator()
    message = ToolMessage(content=[{"type": "image", "url": "x"}], tool_call_id="c", id="t")
    out = feed_all(t, [("messages", (message, META))])
    result = out[-1]
    assert isinstance(result, ToolResultEvent)
    assert result.content == '[{"type": "image", "url": "x"}]'


def test_interrupts_are_collected_from_updates() -> None:
    t = StreamTranslator()
    found = (Interrupt(value={"a": 1}, id="i1"),)
    list(t.feed("updates", {"__interrupt__": found}))
    assert [i.id for i in t.interrupts] == ["i1"]


def test_custom_tool_output_becomes_tool_output_event() -> None:
    t = StreamTranslator()
    out = feed_all(
        t, [("custom", {"type": "tool_output", "chunk": "line\n", "name": "sh", "id": "c"})]
    )
    assert out == [ToolOutputEvent(chunk="line\n", name="sh", id="c")]


def test_agent_stream_event_union_round_trips_camel_case() -> None:
    event = parse_agent_stream_event(
        {"type": "tool_result", "id": "c", "content": "x", "isError": True}
    )
    assert isinstance(event, ToolResultEvent) and event.is_error is True
    assert dump_agent_stream_event(event) == {
        "type": "tool_result",
        "id": "c",
        "content": "x",
        "isError": True,
    }
    assert dump_agent_stream_event(TextEvent(delta="a")) == {"type": "text", "delta": "a"}


def test_the_token_fast_path_yields_what_feed_would_for_every_kind_of_chunk() -> None:
    """``Runtime.stream`` asks ``token`` first and feeds only what it declines: a mixed stream
    gives the same items that way as through ``feed`` alone, and plain tokens take the fast
    path."""
    reasoning = {"reasoning_content": "hmm"}
    call = {"name": "add", "args": '{"a": 1}', "id": "c1", "index": 1, "type": "tool_call_chunk"}
    chunks: list[tuple[str, object]] = [
        ("messages", (AIMessageChunk(content="Hel", id="lc_run--m1"), META)),
        ("messages", (AIMessageChunk(content="lo", id="lc_run--m1"), META)),
        ("messages", (AIMessageChunk(content="", id="lc_run--m1"), META)),
        (
            "messages",
            (AIMessageChunk(content="", id="lc_run--m1", additional_kwargs=reasoning), META),
        ),
        ("messages", (AIMessageChunk(content="after", id="lc_run--m1"), META)),
        ("messages", (AIMessageChunk(content="again", id="lc_run--m1"), META)),
        ("messages", (AIMessageChunk(content="", id="lc_run--m1", tool_call_chunks=[call]), META)),
        ("messages", (AIMessageChunk(content="x", id="lc_run--m1"), META)),
        ("messages", (AIMessageChunk(content="", id="lc_run--m1", chunk_position="last"), META)),
        ("messages", (AIMessageChunk(content="new", id="m2"), META)),
        ("messages", (AIMessageChunk(content="no id", id=None), META)),
        ("messages", (AIMessageChunk(content="m2 again", id="m2"), META)),
        ("updates", {"model": {"messages": []}}),
        ("messages", (AIMessageChunk(content="m2 after update", id="m2"), META)),
        ("custom", {"type": "tool_output", "chunk": "out", "name": "shell"}),
    ]
    slow = feed_all(StreamTranslator(), chunks)
    fast_translator = StreamTranslator()
    fast: list[object] = []
    taken = 0
    for mode, data in chunks:
        item = fast_translator.token(mode, data)
        if item is None:
            fast.extend(fast_translator.feed(mode, data))
        else:
            fast.append(item)
            taken += 1
    assert fast == slow
    assert [type(i) for i in fast] == [type(i) for i in slow]
    assert taken == 4  # lo, again, x, m2 again: the next text of the message still open
    assert TextEvent(delta="lo") in fast


def _results(items: list[object]) -> list[str]:
    return [i.id for i in items if isinstance(i, ToolResultEvent)]


def test_resumed_calls_results_go_out_in_their_calls_order_whichever_ends_first() -> None:
    """Two client tools answered at once finish in either order (their tasks run together); a
    client builds its messages in the order results arrive, so they go out in the calls'."""
    t = StreamTranslator(answering=["call_a", "call_b"])
    late_first = feed_all(
        t,
        [
            (
                "messages",
                (ToolMessage("B", tool_call_id="call_b", id="rb"), {"langgraph_node": "tools"}),
            )
        ],
    )
    assert _results(late_first) == []  # held until call_a's result
    out = feed_all(
        t,
        [
            (
                "messages",
                (ToolMessage("A", tool_call_id="call_a", id="ra"), {"langgraph_node": "tools"}),
            )
        ],
    )
    assert _results(out) == ["call_a", "call_b"]
    assert [i.message_id for i in out if isinstance(i, ToolResultMessage)] == ["ra", "rb"]
    # Any other call's result is not held.
    other = feed_all(
        t,
        [
            (
                "messages",
                (ToolMessage("C", tool_call_id="call_c", id="rc"), {"langgraph_node": "tools"}),
            )
        ],
    )
    assert _results(other) == ["call_c"]


def test_a_resumed_result_held_for_one_that_never_comes_goes_out_at_the_end() -> None:
    t = StreamTranslator(answering=["call_a", "call_b"])
    held = feed_all(t, [("messages", (ToolMessage("B", tool_call_id="call_b"), {}))])
    assert _results(held) == []
    assert _results(list(t.release_held())) == ["call_b"]
    assert list(t.release_held()) == []
