"""Refusals before a stream: each has a status, a stable code and a sentence."""

from __future__ import annotations

import json

import pytest

from gth_jupyter.agui.errors import ProtocolError
from gth_jupyter.agui.request import parse_input


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
