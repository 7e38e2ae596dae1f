"""AG-UI over the widget comm: the kernel runs the agent and streams SSE text back."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.notebook.host.comm_transport import CommTransport
from gth_jupyter.notebook.host.loop import LoopThread
from gth_jupyter.store import CheckpointStore


@pytest.fixture
def loop() -> LoopThread:
    return LoopThread()


def registry_for(responses: list[Any]) -> AgentRegistry:
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": responses}})
    return AgentRegistry(config, command="notebook", store=CheckpointStore("memory"))


def transport(
    sent: list[dict[str, Any]], registry: AgentRegistry, loop: LoopThread
) -> CommTransport:
    return CommTransport(sent.append, registry=lambda: registry, loop=lambda: loop)


def frames(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = "".join(m["data"] for m in sent if m["type"] == "chunk")
    return [json.loads(f[6:]) for f in text.split("\n\n") if f.startswith("data: ")]


def test_a_run_streams_sse_chunks_then_end(loop: LoopThread) -> None:
    sent: list[dict[str, Any]] = []
    comm = transport(sent, registry_for(["Over the comm."]), loop)
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
    }
    future = comm.handle({"type": "run", "requestId": "q1", "body": json.dumps(body)})
    assert future is not None
    future.result(timeout=10)
    assert sent[-1] == {"type": "end", "requestId": "q1"}
    events = frames(sent)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e.get("delta", "") for e in events) == "Over the comm."
    assert all(m["requestId"] == "q1" for m in sent)


def test_a_refusal_is_the_same_json_as_over_http(loop: LoopThread) -> None:
    sent: list[dict[str, Any]] = []
    comm = transport(sent, registry_for([]), loop)
    future = comm.handle({"type": "run", "requestId": "q", "body": "{oops"})
    assert future is not None
    future.result(timeout=10)
    assert sent == [{"type": "error", "requestId": "q", "status": 400, "body": sent[0]["body"]}]
    assert sent[0]["body"]["code"] == "invalid_json"


def test_abort_cancels_the_run_and_history_shows_the_thread(loop: LoopThread) -> None:
    sent: list[dict[str, Any]] = []
    registry = registry_for([{"content": "slow " * 500, "delayMs": 5}, "Next."])
    comm = transport(sent, registry, loop)
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u1", "role": "user", "content": "go"}],
    }
    future = comm.handle({"type": "run", "requestId": "q", "body": body})
    assert future is not None
    deadline = time.monotonic() + 10
    while not any(m["type"] == "chunk" and "TEXT_MESSAGE_CONTENT" in m["data"] for m in sent):
        assert time.monotonic() < deadline, "no content streamed"
        time.sleep(0.01)
    comm.handle({"type": "abort", "requestId": "q"})
    with pytest.raises(Exception):  # noqa: B017 - cancelled
        future.result(timeout=10)
    history = comm.handle({"type": "history", "requestId": "h", "threadId": "t"})
    assert history is not None
    history.result(timeout=10)
    reply = next(m for m in sent if m["type"] == "history")
    assert reply["messages"][0] == {"id": "u1", "role": "user", "content": "go"}


def test_esm_request_returns_the_bundle(loop: LoopThread) -> None:
    sent: list[dict[str, Any]] = []
    comm = transport(sent, registry_for([]), loop)
    comm.handle({"type": "esm", "requestId": "e"})
    assert sent[0]["type"] == "esm" and "render" in sent[0]["code"]


def test_history_and_info_answer_what_the_http_routes_answer(loop: LoopThread) -> None:
    sent: list[dict[str, Any]] = []
    registry = registry_for(["Hello."])
    comm = transport(sent, registry, loop)
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
    }
    run = comm.handle({"type": "run", "requestId": "q", "body": body})
    assert run is not None
    run.result(timeout=10)
    history = comm.handle({"type": "history", "requestId": "h", "threadId": "t"})
    assert history is not None
    history.result(timeout=10)
    reply = next(m for m in sent if m["type"] == "history")
    from gth_jupyter.agui import thread_view

    expected = loop.run(thread_view(loop.run(registry.runtime("default")), "t"))
    assert reply == {"type": "history", "requestId": "h", **expected}
    assert reply["busy"] is False and [m["role"] for m in reply["messages"]] == [
        "user",
        "assistant",
    ]
    comm.handle({"type": "info", "requestId": "i"})
    info = next(m for m in sent if m["type"] == "info")
    assert info == {"type": "info", "requestId": "i", "info": registry.info()}
    assert info["info"]["provider"] == "fake"


@pytest.mark.parametrize(
    "message",
    [
        {"type": "run", "requestId": "x", "agent": ["default"], "body": "{}"},
        {"type": "run", "requestId": "x", "body": 42},
        {"type": "history", "requestId": "x", "threadId": {"$ne": 1}},
        {"type": "history", "requestId": "x"},
    ],
)
def test_malformed_messages_from_the_page_get_an_error_reply(
    loop: LoopThread, message: dict[str, Any]
) -> None:
    sent: list[dict[str, Any]] = []
    comm = transport(sent, registry_for([]), loop)
    assert comm.handle(message) is None
    assert sent == [{"type": "error", "requestId": "x", "status": 400, "body": sent[0]["body"]}]
    assert sent[0]["body"]["code"] == "invalid_message"


def test_an_unknown_agent_is_refused_as_over_http(loop: LoopThread) -> None:
    sent: list[dict[str, Any]] = []
    comm = transport(sent, registry_for([]), loop)
    body = {"threadId": "t", "runId": "r", "messages": []}
    future = comm.handle({"type": "run", "requestId": "q", "agent": "ghost", "body": body})
    assert future is not None
    future.result(timeout=10)
    assert sent[0]["status"] == 404 and sent[0]["body"]["code"] == "agent_not_found"


def test_a_state_nested_too_deep_is_refused_as_over_http_and_the_thread_runs_on(
    loop: LoopThread,
) -> None:
    """The comm parses the body as the endpoint does: 400 levels of state, which ended the
    stream right after RUN_STARTED, are a 422 before any run."""
    from gth_jupyter.agui.request import MAX_NESTING

    sent: list[dict[str, Any]] = []
    comm = transport(sent, registry_for(["Still here."]), loop)
    state: Any = 1
    for _ in range(400):
        state = {"a": state}
    hello = [{"id": "u", "role": "user", "content": "hi"}]
    deep = {"threadId": "t", "runId": "r1", "messages": hello, "state": state}
    future = comm.handle({"type": "run", "requestId": "q1", "body": json.dumps(deep)})
    assert future is not None
    future.result(timeout=10)
    assert [(m["type"], m["status"]) for m in sent] == [("error", 422)]
    refusal = sent[0]["body"]
    assert refusal["code"] == "invalid_input"
    assert refusal["message"].startswith(f"state is nested deeper than {MAX_NESTING} levels at")
    body = {"threadId": "t", "runId": "r2", "messages": hello}
    future = comm.handle({"type": "run", "requestId": "q2", "body": json.dumps(body)})
    assert future is not None
    future.result(timeout=10)
    events = frames([m for m in sent if m["requestId"] == "q2"])
    assert events[-1]["type"] == "RUN_FINISHED"
    assert "".join(e.get("delta", "") for e in events) == "Still here."


def test_however_a_comm_run_ends_its_thread_is_free_again(loop: LoopThread) -> None:
    """Refused after the thread was claimed, aborted mid-stream, finished: each run lets the
    thread go, so the next one is never ``run_busy``."""
    sent: list[dict[str, Any]] = []
    registry = registry_for([{"content": "slow " * 500, "delayMs": 5}, "Done."])
    comm = transport(sent, registry, loop)
    runtime = loop.run(registry.runtime("default"))

    def run(request_id: str, **extra: Any) -> Any:
        hello = [{"id": f"u-{request_id}", "role": "user", "content": "hi"}]
        body = {"threadId": "t", "runId": request_id, "messages": hello, **extra}
        future = comm.handle({"type": "run", "requestId": request_id, "body": body})
        assert future is not None
        return future

    def of(request_id: str) -> list[dict[str, Any]]:
        return [m for m in sent if m["requestId"] == request_id]

    def free() -> bool:
        return loop.run(runtime.running("t")) is None

    # A resume that answers nothing: the thread is claimed, then the plan refuses it.
    run("q1", resume=[{"interruptId": "i-1", "status": "resolved"}]).result(timeout=10)
    assert [(m["type"], m["body"]["code"]) for m in of("q1")] == [("error", "no_pending_interrupt")]
    assert free()

    aborted = run("q2")
    deadline = time.monotonic() + 10
    while not any(m["type"] == "chunk" and "TEXT_MESSAGE_CONTENT" in m["data"] for m in of("q2")):
        assert time.monotonic() < deadline, "no content streamed"
        time.sleep(0.01)
    comm.handle({"type": "abort", "requestId": "q2"})
    while of("q2")[-1] != {"type": "end", "requestId": "q2"}:  # the run's own end, once stopped
        assert time.monotonic() < deadline, "the aborted run never ended"
        time.sleep(0.01)
    assert aborted.cancelled() and free()

    run("q3").result(timeout=10)
    assert frames(of("q3"))[-1]["type"] == "RUN_FINISHED" and free()
