"""Runs that outlive their connection, on a real Jupyter server: ids on every frame, a detached
run that goes on when its client leaves, and re-attaching with ``Last-Event-ID`` (by the events
route or by posting the same ``runId`` again) with every event exactly once."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from gth_jupyter.runs import LocalJournals
from gth_jupyter.server.host import HOST_KEY
from tests.sse import frames_of, sse_events

ANSWER = "slow " * 150


@pytest.fixture
def gth_script() -> list[Any]:
    return [{"content": ANSWER, "delayMs": 4}, "Second answer."]


def body(thread: str, run: str, *, detach: bool = False, text: str = "go") -> dict[str, Any]:
    out: dict[str, Any] = {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"u-{run}", "role": "user", "content": text}],
    }
    if detach:
        out["forwardedProps"] = {"detach": True, "gth": {"turnId": "turn-1"}}
    return out


@pytest.fixture
async def http(jp_serverapp, http_server_client, jp_base_url) -> Any:
    port = http_server_client.get_http_port()
    token = jp_serverapp.identity_provider.token
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}{jp_base_url}gth/",
        headers={"Authorization": f"token {token}"},
        timeout=30,
    ) as client:
        yield client


async def read_some(http: httpx.AsyncClient, payload: dict[str, Any], frames: int) -> list[str]:
    """Posts a run and drops the connection after ``frames`` frames; returns their text."""
    got: list[str] = []
    async with http.stream("POST", "agents/default/run", json=payload) as response:
        assert response.status_code == 200
        block = ""
        async for line in response.aiter_lines():
            if line:
                block += line + "\n"
                continue
            if block:
                got.append(block)
                block = ""
            if len(got) >= frames:
                break
    return got


async def wait_idle(http: httpx.AsyncClient, thread: str) -> dict[str, Any]:
    for _ in range(400):
        view = (await http.get(f"threads/{thread}")).json()
        if not view["busy"]:
            return dict(view)
        await asyncio.sleep(0.05)
    pytest.fail("the run never ended")


def ids(frames: list[dict[str, str]]) -> list[int]:
    return [int(f["id"]) for f in frames if "data" in f]


async def test_every_frame_carries_a_consecutive_id(http: httpx.AsyncClient) -> None:
    response = await http.post("agents/default/run", json=body("t", "r1"))
    frames = frames_of(response.text)
    assert all("id" in f for f in frames if "data" in f)
    assert ids(frames) == list(range(1, len(frames) + 1))


async def test_a_detached_run_goes_on_and_a_client_reattaches_from_its_last_id(
    http: httpx.AsyncClient,
) -> None:
    seen = frames_of("\n".join(await read_some(http, body("t", "r1", detach=True), 6)) + "\n\n")
    last = ids(seen)[-1]
    view = (await http.get("threads/t")).json()
    assert view["busy"] and view["run"] == {"runId": "r1"}

    response = await http.get("runs/r1/events", headers={"Last-Event-ID": str(last)})
    assert response.headers["content-type"] == "text/event-stream"
    rest = frames_of(response.text)
    assert ids(seen) + ids(rest) == list(range(1, ids(rest)[-1] + 1))  # each event once
    events = [json.loads(f["data"]) for f in seen + rest]
    assert events[-1]["type"] == "RUN_FINISHED"
    text = "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")
    assert text == ANSWER

    view = await wait_idle(http, "t")  # the run ended normally and stayed in the thread
    assert "run" not in view
    assert [m["role"] for m in view["messages"]] == ["user", "assistant"]
    assert view["messages"][1]["content"] == ANSWER


async def test_without_detach_a_lost_client_still_cancels_its_run(http: httpx.AsyncClient) -> None:
    await read_some(http, body("t", "r1"), 4)
    view = await wait_idle(http, "t")
    assert view["messages"][-1]["role"] == "user"  # the answer was cut off with its client


async def test_posting_the_same_run_id_reattaches_instead_of_running_twice(
    http: httpx.AsyncClient,
) -> None:
    await read_some(http, body("t", "r1", detach=True), 3)
    again = await http.post("agents/default/run", json=body("t", "r1", detach=True))
    assert again.status_code == 200
    events = sse_events(again.text)  # no Last-Event-ID: the whole run from its first event
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e.get("delta", "") for e in events) == ANSWER
    view = await wait_idle(http, "t")
    assert [m["role"] for m in view["messages"]] == ["user", "assistant"]  # ran once
    # The run's id is taken: a different thread may not reuse it.
    clash = await http.post("agents/default/run", json=body("other", "r1"))
    assert clash.status_code == 409 and clash.json()["code"] == "run_exists"


async def test_reattaching_after_the_run_ended_replays_what_was_missed(
    http: httpx.AsyncClient,
) -> None:
    full = frames_of((await http.post("agents/default/run", json=body("t", "r1"))).text)
    late = await http.get("runs/r1/events", headers={"Last-Event-ID": "2"})
    assert frames_of(late.text) == full[2:]
    nothing = await http.get("runs/r1/events", params={"lastEventId": str(len(full))})
    assert nothing.status_code == 200 and frames_of(nothing.text) == []


async def test_bad_reattach_requests_get_json_refusals(
    http: httpx.AsyncClient, jp_serverapp
) -> None:
    unknown = await http.get("runs/nope/events")
    assert unknown.status_code == 404 and unknown.json()["code"] == "run_not_found"
    await http.post("agents/default/run", json=body("t", "r1"))
    for bad in ("-1", "x", "1.5", "9" * 30):
        refused = await http.get("runs/r1/events", headers={"Last-Event-ID": bad})
        assert refused.status_code == 422 and refused.json()["code"] == "invalid_input", bad
    # A run longer than what its journal keeps: the early frames are gone.
    jp_serverapp.web_app.settings[HOST_KEY].runs.journals = LocalJournals(max_bytes=200)
    await http.post("agents/default/run", json=body("t", "r2", text="again"))
    gone = await http.get("runs/r2/events", headers={"Last-Event-ID": "1"})
    assert gone.status_code == 410 and gone.json()["code"] == "events_expired"


async def test_delete_stops_a_detached_run_and_its_followers_see_why(
    http: httpx.AsyncClient,
) -> None:
    await read_some(http, body("t", "r1", detach=True), 3)
    follower = asyncio.ensure_future(http.get("runs/r1/events"))
    await asyncio.sleep(0.2)
    stopped = await http.delete("runs/r1")
    assert stopped.status_code == 204
    events = sse_events((await follower).text)
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "run_cancelled"
    text = "".join(e.get("delta", "") for e in events)
    assert 0 < len(text) < len(ANSWER)  # stopped part-way
    view = await wait_idle(http, "t")
    assert "run" not in view
    again = await http.delete("runs/r1")  # already over: nothing to do
    assert again.status_code == 204
    unknown = await http.delete("runs/nope")
    assert unknown.status_code == 404 and unknown.json()["code"] == "run_not_found"


async def test_a_huge_run_id_in_the_path_is_simply_not_found(http: httpx.AsyncClient) -> None:
    huge = "r" * 5_000
    events = await http.get(f"runs/{huge}/events")
    assert events.status_code == 404 and events.json()["code"] == "run_not_found"
    stopped = await http.delete(f"runs/{huge}")
    assert stopped.status_code == 404 and stopped.json()["code"] == "run_not_found"
