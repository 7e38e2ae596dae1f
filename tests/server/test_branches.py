"""Branches (issue 18): a run with AG-UI's ``parentRunId`` continues from where that run ended,
not from the thread's end; a new turn for a notebook cell that already has one on the current
branch replaces it. The thread view shows the current branch and lists every branch
(``branches``), ``?run=`` reads an older one and ``?turn=`` finds a turn on any branch.

On the Jupyter extension (in-memory and PostgreSQL stores) and on the standalone server; what
the model was sent is read from the scripted model's record (``recordPath``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from tests.helpers import run_input
from tests.sse import sse_events

STORES = pytest.mark.parametrize("gth_checkpointer", ["memory", "postgres"], indirect=True)
ANSWERS = [f"Answer {i}." for i in range(1, 13)]


@pytest.fixture
def record(tmp_path: Path) -> Path:
    return tmp_path / "calls.jsonl"


SHELL_THEN_ANSWER = {
    "llm": {
        "type": "fake",
        "responses": [
            {"toolCalls": [{"name": "run_shell_command", "args": {"command": "ls"}}]},
            "Replaced.",
        ],
    },
    "builtInTools": ["run_shell_command"],
    "approvals": "manual",
}


@pytest.fixture
def gth_config(record: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The scripted model answering ``ANSWERS`` in turn, or (``indirect``) a configuration."""
    config = getattr(request, "param", {"llm": {"type": "fake", "responses": ANSWERS}})
    return {**config, "llm": {**config["llm"], "recordPath": str(record)}}


def sent(record: Path) -> list[list[str]]:
    """The human and AI texts of each model call, in order."""
    calls = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    return [
        [str(m["content"]) for m in call["messages"] if m.get("type") in ("human", "ai")]
        for call in calls
    ]


Post = Callable[..., Any]


@pytest.fixture
def post(jp_fetch: Any) -> Post:
    async def post(run_id: str, text: str, **extra: Any) -> list[dict[str, Any]]:
        body = json.dumps(run_input("b", run_id, text, **extra))
        answer = await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
        return sse_events(answer.body)

    return post


@pytest.fixture
def view(jp_fetch: Any) -> Callable[..., Any]:
    async def view(**query: str) -> dict[str, Any]:
        answer = await jp_fetch("gth", "threads", "b", params=query)
        return dict(json.loads(answer.body))

    return view


def texts(view: dict[str, Any]) -> list[str]:
    return [m.get("content", "") for m in view["messages"]]


@STORES
async def test_a_run_from_the_first_run_sends_only_the_first_turn_and_keeps_the_rest(
    post: Post, view: Any, record: Path
) -> None:
    for i in (1, 2, 3):
        await post(f"r{i}", f"Question {i}?")
    events = await post("r4", "Question 4?", parentRunId="r1")
    started = events[0]
    assert started["type"] == "RUN_STARTED" and started["parentRunId"] == "r1"
    assert events[-1]["type"] == "RUN_FINISHED"
    # The model saw the first turn and the new prompt only.
    assert sent(record)[-1] == ["Question 1?", "Answer 1.", "Question 4?"]
    current = await view()
    assert texts(current) == ["Question 1?", "Answer 1.", "Question 4?", "Answer 4."]
    assert current["currentBranch"] is True
    branches = {b["runId"]: b for b in current["branches"]}
    assert set(branches) == {"r3", "r4"}
    assert branches["r4"]["parentRunId"] == "r1" and branches["r4"]["current"] is True
    assert branches["r3"]["parentRunId"] == "r2" and branches["r3"]["current"] is False
    assert all(b["createdAt"] for b in current["branches"])
    # The old branch is kept and can be read.
    old = await view(run="r3")
    assert texts(old)[-2:] == ["Question 3?", "Answer 3."] and len(old["messages"]) == 6
    assert old["currentBranch"] is False
    # A run without parentRunId continues the current branch.
    await post("r5", "Question 5?")
    assert sent(record)[-1][-3:] == ["Question 4?", "Answer 4.", "Question 5?"]


@STORES
async def test_an_unknown_parent_run_is_409_and_changes_nothing(
    post: Post, view: Any, jp_fetch: Any
) -> None:
    await post("r1", "Hello?")
    body = json.dumps(run_input("b", "r2", "Again?", parentRunId="no-such-run"))
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
    assert refused.value.code == 409
    error = json.loads(refused.value.response.body)
    assert error["code"] == "parent_run_not_found" and "no-such-run" in error["message"]
    assert texts(await view()) == ["Hello?", "Answer 1."]
    with pytest.raises(HTTPClientError) as missing:
        await jp_fetch("gth", "threads", "b", params={"run": "no-such-run"})
    assert missing.value.code == 404
    assert json.loads(missing.value.response.body)["code"] == "run_not_found"


@pytest.mark.parametrize("parent", ["", "   ", "x" * 513, 7, ["r1"]])
async def test_a_malformed_parent_run_is_422_and_changes_nothing(
    post: Post, view: Any, jp_fetch: Any, parent: Any
) -> None:
    await post("r1", "Hello?")
    body = json.dumps(run_input("b", "r2", "Again?", parentRunId=parent))
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
    assert refused.value.code == 422
    assert json.loads(refused.value.response.body)["code"] == "invalid_input"
    assert texts(await view()) == ["Hello?", "Answer 1."]


@STORES
async def test_the_threads_own_id_branches_from_its_start(
    post: Post, view: Any, record: Path
) -> None:
    await post("r1", "First?")
    await post("r2", "Second?")
    events = await post("r3", "Fresh start?", parentRunId="b")
    assert events[0]["parentRunId"] == "b"
    assert sent(record)[-1] == ["Fresh start?"]
    assert texts(await view()) == ["Fresh start?", "Answer 3."]


def cell_run(text: str, run_id: str, cell: str) -> dict[str, Any]:
    props = {"gth": {"turnId": f"turn-{run_id}", "cellId": cell}}
    return {"forwardedProps": props, "text": text, "run_id": run_id}


@STORES
async def test_running_a_cell_again_replaces_its_turn_and_run_all_keeps_one_context(
    post: Post, view: Any, record: Path
) -> None:
    """Three cells, Run All three times: each time, every cell's call carries exactly the
    turns of the cells above it; then the second cell alone, edited."""
    count = 0
    for round_ in range(3):
        for cell in (1, 2, 3):
            count += 1
            props = {"gth": {"turnId": f"turn-{count}", "cellId": f"cell-{cell}"}}
            events = await post(f"r{count}", f"Cell {cell}?", forwardedProps=props)
            # The first cell of a later Run All branches from the thread's start.
            expected = "b" if round_ and cell == 1 else None
            assert events[0].get("parentRunId") == expected, (round_, cell, events[0])
        calls = sent(record)[-3:]
        assert [[t for t in c if t.startswith("Cell")] for c in calls] == [
            ["Cell 1?"],
            ["Cell 1?", "Cell 2?"],
            ["Cell 1?", "Cell 2?", "Cell 3?"],
        ]
    shown = await view()
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"] == [
        "Cell 1?",
        "Cell 2?",
        "Cell 3?",
    ]
    assert [t.get("cellId") for t in shown["turns"]] == ["cell-1", "cell-2", "cell-3"]
    # The second cell, edited and run alone: the model sees the first turn and the new prompt.
    props = {"gth": {"turnId": "turn-edit", "cellId": "cell-2"}}
    events = await post("r-edit", "Cell 2, edited?", forwardedProps=props)
    assert events[0]["parentRunId"] == "r7"  # the first cell's run of the last Run All
    assert [t for t in sent(record)[-1] if t.startswith("Cell")] == ["Cell 1?", "Cell 2, edited?"]
    # The third cell's turn is no longer on the current branch, but its widget finds it.
    third = await view(turn="turn-9")
    assert third["currentBranch"] is False
    assert [m["content"] for m in third["messages"] if m["role"] == "user"] == ["Cell 3?"]
    # Its saved copy says so too.
    copy = (await view(turn="turn-9", copy="1"))["copy"]
    assert "From an earlier run" in copy["text/plain"] and "Answer 9." in copy["text/plain"]
    assert (await view(turn="turn-edit"))["currentBranch"] is True


@STORES
@pytest.mark.parametrize("gth_config", [SHELL_THEN_ANSWER], indirect=True)
async def test_a_cell_waiting_on_an_approval_is_replaced_not_refused(jp_fetch: Any) -> None:
    """The cell's earlier turn waits on an approval: running the cell again is not
    ``409 interrupt_pending``; the new turn starts from before it, and the thread no longer
    waits on the approval."""

    async def run(run_id: str, text: str) -> list[dict[str, Any]]:
        props = {"gth": {"turnId": f"turn-{run_id}", "cellId": "cell-1"}}
        body = json.dumps(run_input("w", run_id, text, forwardedProps=props))
        answer = await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
        return sse_events(answer.body)

    first = await run("r1", "List the files?")
    assert first[-1]["type"] == "RUN_FINISHED" and first[-1].get("outcome", {}).get("type") in (
        "interrupt",
        None,
    )
    waiting = json.loads((await jp_fetch("gth", "threads", "w")).body)
    assert waiting["interrupts"], waiting
    again = await run("r2", "Say hello?")
    assert again[0]["parentRunId"] == "w" and again[-1]["type"] == "RUN_FINISHED"
    now = json.loads((await jp_fetch("gth", "threads", "w")).body)
    assert now["interrupts"] == [] and [m.get("content") for m in now["messages"]] == [
        "Say hello?",
        "Replaced.",
    ]


# -- the standalone server -----------------------------------------------------------------------


@pytest.fixture
async def standalone_server(tmp_path: Path, record: Path) -> AsyncIterator[Any]:
    from tests.standalone import standalone

    config = {"llm": {"type": "fake", "responses": ANSWERS, "recordPath": str(record)}}
    async with standalone(tmp_path, config, token="s3cret-t0ken-for-tests") as server:
        yield server


async def test_the_standalone_server_branches_the_same_way(
    standalone_server: Any, record: Path
) -> None:
    http = standalone_server.http
    headers = {"Authorization": "Bearer s3cret-t0ken-for-tests"}

    async def post(run_id: str, text: str, **extra: Any) -> list[dict[str, Any]]:
        answer = await http.post(
            "/gth/agents/default/run", json=run_input("s", run_id, text, **extra), headers=headers
        )
        assert answer.status_code == 200, answer.text
        return sse_events(answer.content)

    for i in (1, 2, 3):
        await post(f"r{i}", f"Question {i}?")
    events = await post("r4", "Question 4?", parentRunId="r1")
    assert events[0]["parentRunId"] == "r1"
    assert sent(record)[-1] == ["Question 1?", "Answer 1.", "Question 4?"]
    shown = (await http.get("/gth/threads/s", headers=headers)).json()
    assert {b["runId"]: b["current"] for b in shown["branches"]} == {"r3": False, "r4": True}
    old = (await http.get("/gth/threads/s", params={"run": "r3"}, headers=headers)).json()
    assert len(old["messages"]) == 6 and old["currentBranch"] is False
    refused = await http.post(
        "/gth/agents/default/run",
        json=run_input("s", "r5", "x", parentRunId="r-unknown"),
        headers=headers,
    )
    assert refused.status_code == 409 and refused.json()["code"] == "parent_run_not_found"
    missing = await http.get("/gth/threads/s", params={"run": "nope"}, headers=headers)
    assert missing.status_code == 404 and missing.json()["code"] == "run_not_found"
