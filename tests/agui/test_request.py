"""Refusals before a stream: each has a status, a stable code and a sentence."""

from __future__ import annotations

import json

import pytest

from gth_jupyter.agui.errors import ProtocolError
from gth_jupyter.agui.request import MAX_NESTING, parse_input


def refusal(body: bytes, **kw: int) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        parse_input(body, **kw)
    return info.value


def test_not_json_is_400_invalid_json() -> None:
    error = refusal(b'{"threadId": ')
    assert (error.status, error.code) == (400, "invalid_json")
    assert "not valid JSON" in error.message


def test_non_utf8_body_is_400_not_a_crash() -> None:
    assert refusal(b"\xff\xfe{").code == "invalid_json"


def test_a_json_array_is_422() -> None:
    error = refusal(b"[]")
    assert (error.status, error.code) == (422, "invalid_input")


def test_missing_messages_are_422_with_their_path() -> None:
    error = refusal(b'{"threadId": "t"}')
    assert error.status == 422
    paths = [e["path"] for e in error.detail["errors"]]
    assert paths == ["messages"]
    assert "messages" in error.message


def test_omitted_ids_are_generated_as_gaunt_sloth_does() -> None:
    hello = [{"role": "user", "content": "Hello", "id": "1"}]
    only_thread = parse_input(json.dumps({"threadId": "t1", "messages": hello}).encode())
    assert only_thread.thread_id == "t1" and len(only_thread.run_id) >= 32
    bare = parse_input(json.dumps({"messages": hello}).encode())
    assert bare.thread_id and bare.run_id and bare.thread_id != bare.run_id
    again = parse_input(json.dumps({"messages": hello}).encode())
    assert again.thread_id != bare.thread_id  # a fresh thread each time
    nulls = parse_input(json.dumps({"threadId": None, "runId": None, "messages": []}).encode())
    assert nulls.thread_id and nulls.run_id


@pytest.mark.parametrize("value", [5, "", " ", ["t"]])
def test_an_id_given_but_malformed_is_still_422(value: object) -> None:
    body = {"threadId": value, "runId": "r", "messages": []}
    error = refusal(json.dumps(body).encode())
    assert (error.status, error.code) == (422, "invalid_input")
    assert "threadId" in error.message


def test_bad_message_role_names_the_nested_path() -> None:
    body = {"threadId": "t", "runId": "r", "messages": [{"id": "1", "role": "robot"}]}
    error = refusal(json.dumps(body).encode())
    assert error.detail["errors"][0]["path"].startswith("messages[0]")


def test_empty_thread_id_is_refused() -> None:
    body = {"threadId": " ", "runId": "r", "messages": []}
    assert refusal(json.dumps(body).encode()).code == "invalid_input"


def test_tool_parameters_must_be_an_object() -> None:
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [],
        "tools": [{"name": "x", "description": "d", "parameters": [1]}],
    }
    error = refusal(json.dumps(body).encode())
    assert error.detail["errors"][0]["path"] == "tools[0].parameters"


def test_body_over_the_limit_is_413() -> None:
    error = refusal(b"{" + b" " * 100 + b"}", max_body_bytes=50)
    assert (error.status, error.code) == (413, "body_too_large")
    assert error.detail == {"size": 102, "limit": 50}


def test_a_valid_body_parses() -> None:
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
    }
    request = parse_input(json.dumps(body).encode())
    assert request.thread_id == "t" and request.messages[0].content == "hi"


# -- nesting: JSON deeper than MAX_NESTING breaks the run after its stream started ------------


def nested(levels: int, key: str = "a") -> object:
    """``levels`` objects, one inside the other."""
    value: object = 1
    for _ in range(levels):
        value = {key: value}
    return value


def deep_request(**fields: object) -> bytes:
    body = {"threadId": "t", "runId": "r", "messages": [], **fields}
    return json.dumps(body).encode()


def call_with(arguments: str, result: str = "3") -> list[dict[str, object]]:
    """An assistant tool call with ``arguments`` and its ``result``, as a client resends
    them."""
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": arguments}}
    return [
        {"id": "a1", "role": "assistant", "content": "", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": result},
    ]


def test_a_state_nested_400_levels_is_422_naming_the_path_and_the_limit() -> None:
    """The attack: 400 levels of ``state`` passed validation, the run started, and the
    stream ended after RUN_STARTED (``Maximum serialization depth exceeded``)."""
    error = refusal(deep_request(state=nested(400)))
    assert (error.status, error.code) == (422, "invalid_input")
    assert error.message.startswith(f"state is nested deeper than {MAX_NESTING} levels at ")
    assert "at state.a.a.a.a" in error.message
    (found,) = error.detail["errors"]
    assert found["path"].startswith("state.a.a.a") and found["type"] == "too_deep"
    assert len(found["path"]) < 200  # named, not all 400 levels of it


def test_state_within_the_limit_is_accepted() -> None:
    assert MAX_NESTING >= 200  # a 200-deep state has always run
    request = parse_input(deep_request(state=nested(MAX_NESTING)))
    assert request.state == nested(MAX_NESTING)
    assert refusal(deep_request(state=nested(MAX_NESTING + 1))).code == "invalid_input"


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"forwardedProps": {"x": [nested(400)]}}, "forwardedProps.x[0].a.a"),
        (
            {"tools": [{"name": "t", "description": "d", "parameters": nested(400, "p")}]},
            "tools[0].parameters.p.p",
        ),
        ({"context": [{"description": "d", "value": "v", "extra": nested(400)}]}, "context[0]"),
        (
            {"messages": [{"id": "u", "role": "user", "content": [nested(400)]}]},
            "messages[0].content[0].a",
        ),
        (
            {"resume": [{"interruptId": "i", "status": "resolved", "payload": nested(400)}]},
            "resume[0].payload.a",
        ),
        # JSON inside a string, which the run parses: tool-call arguments, a tool's result, a
        # resume payload.
        (
            {"messages": call_with(json.dumps(nested(400)))},
            "messages[0].toolCalls[0].function.arguments.a.a",
        ),
        (
            {"messages": call_with("{}", result="[" * 300 + "]" * 300)},
            "messages[1].content[0][0]",
        ),
        (
            {
                "resume": [
                    {"interruptId": "i", "status": "resolved", "payload": json.dumps(nested(400))}
                ]
            },
            "resume[0].payload.a",
        ),
    ],
)
def test_every_nested_json_the_run_takes_is_held_to_the_same_limit(
    fields: dict[str, object], path: str
) -> None:
    error = refusal(deep_request(**fields))
    assert (error.status, error.code) == (422, "invalid_input")
    assert f"nested deeper than {MAX_NESTING} levels" in error.message
    assert error.detail["errors"][0]["path"].startswith(path), error.detail


def test_tool_call_arguments_too_deep_to_parse_are_refused_not_a_crash_mid_run() -> None:
    """Python's json gives up at about 1000 levels with RecursionError, which the run's own
    parse of the arguments did not catch."""
    error = refusal(deep_request(messages=call_with("[" * 5000 + "]" * 5000)))
    assert error.code == "invalid_input"
    assert error.detail["errors"][0]["path"] == "messages[0].toolCalls[0].function.arguments"


def test_a_body_too_deep_to_read_is_the_same_refusal() -> None:
    state = b"[" * 5000 + b"]" * 5000
    error = refusal(b'{"threadId": "t", "messages": [], "state": ' + state + b"}")
    assert (error.status, error.code) == (422, "invalid_input")
    assert f"nested deeper than {MAX_NESTING} levels" in error.message


def test_a_long_key_on_the_way_down_keeps_the_named_path_short() -> None:
    error = refusal(deep_request(state=nested(400, "k" * 10_000)))
    assert error.detail["errors"][0]["path"].endswith("…")
    assert len(error.message) < 300
