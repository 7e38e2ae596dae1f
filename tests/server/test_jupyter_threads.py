"""GET {base_url}gth/threads/{id}: the conversation as AG-UI messages, for a reloaded page."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.sse import sse_events as parse_sse

#: Both tests on the in-memory store and on the shared PostgreSQL one.
STORES = pytest.mark.parametrize("gth_checkpointer", ["memory", "postgres"], indirect=True)


@pytest.fixture
def gth_script() -> list[Any]:
    return [
        {
            "content": "Counting.",
            "toolCalls": [{"name": "gth_status_update", "args": {"message": "1"}}],
        },
        "Done.",
    ]


@STORES
async def test_history_matches_the_streamed_ids(jp_fetch) -> None:
    body = json.dumps(
        {"threadId": "h", "runId": "r", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
    )
    stream = await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
    events = parse_sse(stream.body)
    history = json.loads((await jp_fetch("gth", "threads", "h")).body)
    messages = history["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    starts = [e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START"]
    assert [messages[1]["id"], messages[3]["id"]] == starts
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert messages[2]["id"] == result["messageId"] and messages[2]["content"] == "1"
    assert messages[1]["toolCalls"][0]["function"]["name"] == "gth_status_update"
    assert history["busy"] is False and history["pendingToolCallIds"] == []


@STORES
async def test_an_unknown_thread_is_empty(jp_fetch) -> None:
    history = json.loads((await jp_fetch("gth", "threads", "nobody")).body)
    assert history["messages"] == []
