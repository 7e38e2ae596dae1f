"""Deciding a run: the plan comes out whole, with the thread key, owner, kernel and the thread
it read, so nothing patches it after the decision."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from gth_jupyter.agui.plan import decide_plan
from gth_jupyter.agui.request import parse_request
from gth_jupyter.contract.names import TURN_KEY
from gth_jupyter.contract.run import ThreadState
from tests.conftest import body


class Kernel:
    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]:
        return {}

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]:
        return {}

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]:
        return {}


def test_the_plan_carries_what_the_host_knows_and_the_thread_it_read() -> None:
    request = parse_request(
        body(
            "t1",
            "r1",
            [{"id": "u1", "role": "user", "content": "hi"}],
            forwardedProps={"gth": {"turnId": "cell-3", "kernelId": "k1"}, "detach": True},
        )
    )
    assert (request.turn, request.kernel_id, request.detach) == ("cell-3", "k1", True)
    state = ThreadState([HumanMessage("before", id="h0"), AIMessage("ok", id="a0")], [])
    kernel = Kernel()
    plan = decide_plan(
        request.input, state, turn=request.turn, thread_key="alice:t1", kernel=kernel, owner="alice"
    ).plan
    assert (plan.thread_id, plan.owner, plan.kernel, plan.before) == (
        "alice:t1",
        "alice",
        kernel,
        state,
    )
    assert [m.content for m in plan.messages] == ["hi"]
    assert plan.messages[0].additional_kwargs[TURN_KEY] == "cell-3"


def test_without_a_host_the_plan_runs_on_the_requests_thread_for_nobody() -> None:
    request = parse_request(body("t1", "r1", [{"id": "u1", "role": "user", "content": "hi"}]))
    assert (request.turn, request.kernel_id, request.detach) == (None, None, False)
    plan = decide_plan(request.input, ThreadState([], [])).plan
    assert (plan.thread_id, plan.owner, plan.kernel) == ("t1", "", None)
