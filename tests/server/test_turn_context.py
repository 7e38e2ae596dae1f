"""``GET gth/threads/{id}/context?turn=ID`` (issue 19): what each model call of a turn was sent —
the system prompt, the history, each tool result as the model got it (cut, with its size),
the tools offered — with tokens per item and the largest first; kept with the thread (so after
a restart too), bounded per call, and for the thread's owner alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from tornado.httpclient import HTTPClientError

from gth_jupyter.agent.model_calls import CALL_BYTES, ITEM_CHARS
from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.agui.history import thread_view, turn_calls
from gth_jupyter.models.fake import FakeChatModel
from tests.conftest import body, run_events
from tests.server.test_ownership import as_user, refused
from tests.users import HeaderIdentity

BIG = "row,value\n" + "".join(f"{i},{i * 7}\n" for i in range(200_000))  # about 2 MB


@tool
def export_table() -> str:
    """Returns the whole table as CSV."""
    return BIG


def turn(turn_id: str) -> dict[str, Any]:
    return {"forwardedProps": {"gth": {"turnId": turn_id}}}


async def test_each_call_of_a_turn_is_kept_as_it_was_sent_and_within_its_cap() -> None:
    model = FakeChatModel(
        responses=[{"toolCalls": [{"name": "export_table", "args": {}}]}, "Here it is."]
    )
    runtime = Runtime(
        model, [export_table], checkpointer=InMemorySaver(), system_prompt="Be terse."
    )
    await run_events(runtime, body("t", "r1", "export the table", **turn("c1")))

    found = await turn_calls(runtime, "t", "c1")
    assert found is not None
    first, second = found["calls"]
    assert first["tools"] == ["export_table"] and first["model"] == "scripted"
    kinds = [m["kind"] for m in second["messages"]]
    assert kinds == ["system prompt", "text", "tool calls: export_table", "export_table result"]
    system, prompt, _calls, result = second["messages"]
    assert system["content"] == "Be terse." and prompt["content"] == "export the table"
    # The tool result as the model got it: its size, its tokens, its text cut.
    assert result["chars"] == len(BIG) and result["tokens"] >= len(BIG) // 4
    assert result["cut"] is True and len(result["content"]) == ITEM_CHARS
    assert second["largest"][0]["kind"] == "export_table result"
    assert second["largest"][0]["share"] > 0.99
    assert second["usage"]["inputTokens"] > 0  # the provider's count for the call
    assert len(json.dumps(second).encode()) <= CALL_BYTES + 4096  # the record, plus `largest`
    # The same calls by the run's id; a turn the thread has not is None.
    assert (await turn_calls(runtime, "t", "r1")) == found
    assert await turn_calls(runtime, "t", "no-such-turn") is None
    # The view names the turn the calls are for.
    assert (await thread_view(runtime, "t"))["turns"][0]["turnId"] == "c1"


async def test_a_call_past_its_cap_keeps_the_end_of_the_conversation() -> None:
    many = [{"content": "x" * 3000}] * 120
    model = FakeChatModel(responses=[*many, "Last."])
    runtime = Runtime(model, [], checkpointer=InMemorySaver())
    history: list[dict[str, Any]] = []
    for i in range(121):
        history.append({"id": f"u{i}", "role": "user", "content": f"question {i} " + "y" * 3000})
        await run_events(runtime, body("t", f"r{i}", history[-1:], **turn(f"c{i}")))
    found = await turn_calls(runtime, "t", "c120")
    assert found is not None
    (call,) = found["calls"]
    assert len(json.dumps(call).encode()) <= CALL_BYTES + 4096
    assert "256 KiB" in call["cut"]
    assert call["messages"][0]["content"] == "" and call["messages"][0]["chars"] > 0
    assert call["messages"][-1]["content"].startswith("question 120")


@pytest.fixture
def gth_server_app() -> dict[str, Any]:
    return {"identity_provider_class": HeaderIdentity}


@pytest.fixture
def gth_config() -> dict[str, Any]:
    return {"llm": {"type": "fake", "responses": ["One.", "Two."]}}


async def test_the_endpoint_serves_the_owner_and_refuses_anyone_else(jp_fetch: Any) -> None:
    run = json.dumps(
        {
            "threadId": "a1",
            "runId": "r1",
            "messages": [{"id": "u1", "role": "user", "content": "hi"}],
            **turn("c1"),
        }
    )
    await as_user(jp_fetch, "alice", "agents", "default", "run", method="POST", body=run)
    mine = await as_user(jp_fetch, "alice", "threads", "a1", "context", params={"turn": "c1"})
    (call,) = json.loads(mine.body)["calls"]
    assert call["messages"][-1]["content"] == "hi"
    # Bob: the same id is a thread of his own, with no such turn; alice's is never shown.
    assert await refused(jp_fetch, "bob", "threads", "a1", "context", params={"turn": "c1"}) == (
        404,
        "turn_not_found",
    )
    assert await refused(jp_fetch, "bob", "threads", "a1", "context") == (404, "thread_not_found")
    asked = {"turn": "c1", "owner": "alice"}
    assert await refused(jp_fetch, "bob", "threads", "a1", "context", params=asked) == (
        404,
        "thread_not_found",
    )

    # A turn id of 20,000 characters is one more unknown turn: refused in a short sentence.
    long = {"turn": "t" * 20_000}
    with pytest.raises(HTTPClientError) as info:
        await as_user(jp_fetch, "alice", "threads", "a1", "context", params=long)
    assert info.value.code == 404 and info.value.response is not None
    refusal = json.loads(info.value.response.body)
    assert refusal["code"] == "turn_not_found" and len(refusal["message"]) < 300


async def test_the_context_is_the_history_after_summarization(tmp_path: Any) -> None:
    """Gaunt Sloth's summarization middleware replaced the earlier turn with a summary: the
    Context of the next turn shows what the model got, the summary, not the turn it replaced."""
    from tests.standalone import standalone

    config = {
        "llm": {
            "type": "fake",
            "responses": ["First answer " * 60, "SUMMARY OF THE EARLIER TURN", "Second answer."],
        },
        "middleware": [
            {"name": "summarization", "maxTokensBeforeSummary": 60, "messagesToKeep": 1}
        ],
    }
    token = "summary-token-1234"
    auth = {"Authorization": f"token {token}"}
    async with standalone(tmp_path, config, token=token) as server:
        for run_id, text in (("r1", "question one"), ("r2", "question two")):
            body = {
                "threadId": "s",
                "runId": run_id,
                "protocolVersion": "1.0",
                "messages": [{"id": f"u-{run_id}", "role": "user", "content": text}],
            }
            answer = await server.http.post("/agents/default/run", headers=auth, json=body)
            assert answer.status_code == 200
        shown = await server.http.get("/gth/threads/s/context?turn=r2", headers=auth)
    (call,) = shown.json()["calls"]
    sent = " ".join(str(m["content"]) for m in call["messages"])
    assert "SUMMARY OF THE EARLIER TURN" in sent and "question two" in sent
    assert "First answer" not in sent
