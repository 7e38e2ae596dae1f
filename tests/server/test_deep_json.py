"""JSON nested deeper than a run can serialize is refused before its stream opens, by both hosts.

400 levels of ``state`` used to pass validation: the run started, and its stream ended right
after ``RUN_STARTED`` (the state snapshot could not be dumped: ``Maximum serialization depth
exceeded``). Now ``parse_request`` refuses it with ``422 invalid_input`` naming the path and the
limit, and the thread is untouched, so the next run on it goes on as usual.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from gth_jupyter.agui.request import MAX_NESTING
from tests.conftest import body
from tests.sse import sse_events
from tests.standalone import standalone

STORES = pytest.mark.parametrize("gth_checkpointer", ["memory", "postgres"], indirect=True)
TOKEN = "deep-deep-deep-deep"
HELLO = [{"id": "u1", "role": "user", "content": "hi"}]
LIMIT = f"nested deeper than {MAX_NESTING} levels"


@pytest.fixture
def gth_script() -> list[Any]:
    return ["First.", "Second.", "Third."]


def nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


async def refused(jp_fetch: Any, payload: bytes) -> dict[str, Any]:
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=payload)
    assert info.value.code == 422 and info.value.response is not None
    answer: dict[str, Any] = json.loads(info.value.response.body)
    assert answer["code"] == "invalid_input", answer
    return answer


async def ran(jp_fetch: Any, payload: bytes) -> list[dict[str, Any]]:
    response = await jp_fetch("gth", "agents", "default", "run", method="POST", body=payload)
    events = sse_events(response.body)
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events


def text(events: list[dict[str, Any]]) -> str:
    return "".join(e.get("delta", "") for e in events)


@STORES
async def test_a_400_deep_state_is_422_and_the_thread_runs_on(jp_fetch: Any) -> None:
    answer = await refused(jp_fetch, body("t", "r1", HELLO, state=nested(400)))
    assert answer["message"].startswith(f"state is {LIMIT} at state.a.a.a")
    assert answer["detail"]["errors"][0]["path"].startswith("state.a.a.a")
    # Nothing of the refused run was kept: the same thread runs, from its first answer.
    events = await ran(jp_fetch, body("t", "r2", HELLO))
    assert text(events) == "First."
    # 200 levels run as they always did, the state coming back in its snapshot.
    again = [*HELLO, {"id": "u2", "role": "user", "content": "again"}]
    events = await ran(jp_fetch, body("t", "r3", again, state=nested(200)))
    assert text(events) == "Second."
    snapshots = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    assert snapshots and snapshots[-1] == nested(200)


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({"forwardedProps": {"gth": {"turnId": "x"}, "deep": nested(400)}}, "forwardedProps.deep"),
        (
            {
                "messages": [
                    *HELLO,
                    {
                        "id": "a1",
                        "role": "assistant",
                        "content": "",
                        "toolCalls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {
                                    "name": "gth_status_update",
                                    "arguments": json.dumps(nested(400)),
                                },
                            }
                        ],
                    },
                    {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "ok"},
                ]
            },
            "messages[1].toolCalls[0].function.arguments.a.a",
        ),
    ],
)
async def test_deep_forwarded_props_and_tool_args_are_refused_the_same_way(
    jp_fetch: Any, extra: dict[str, Any], path: str
) -> None:
    payload = json.loads(body("t", "r1", HELLO))
    answer = await refused(jp_fetch, json.dumps({**payload, **extra}).encode())
    assert LIMIT in answer["message"]
    assert answer["detail"]["errors"][0]["path"].startswith(path)
    assert text(await ran(jp_fetch, body("t", "r2", HELLO))) == "First."


async def test_the_standalone_server_refuses_it_too(tmp_path: Path) -> None:
    config = {"llm": {"type": "fake", "responses": ["First."]}}
    auth = {"Authorization": f"token {TOKEN}"}
    async with standalone(tmp_path, config, token=TOKEN) as served:
        deep = body("t", "r1", HELLO, state=nested(400))
        refusal = await served.http.post("/gth/agents/default/run", headers=auth, content=deep)
        assert refusal.status_code == 422, refusal.text
        assert refusal.json()["code"] == "invalid_input"
        assert refusal.json()["message"].startswith(f"state is {LIMIT} at state.a.a")
        response = await served.http.post(
            "/gth/agents/default/run", headers=auth, content=body("t", "r2", HELLO)
        )
        events = sse_events(response.text)
        assert events[-1]["type"] == "RUN_FINISHED" and text(events) == "First."
