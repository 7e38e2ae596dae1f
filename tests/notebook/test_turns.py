"""The kernel side's turn order (``host/turns.py``): each ``%gth`` turn follows the one the kernel
started before it on its thread, and a run the kernel starts there itself (``Session``) waits for
that turn as the page does for a widget's."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from gth_jupyter.contract.names import TURN_KEY
from gth_jupyter.contract.pending import PendingInterrupt
from gth_jupyter.contract.run import ThreadState
from gth_jupyter.notebook.host import reset_kernel_host, turns
from gth_jupyter.notebook.host.turns import EarlierTurn, next_turn


@pytest.fixture(autouse=True)
def fresh_host(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    reset_kernel_host()
    monkeypatch.setattr(turns, "POLL_S", 0.01)
    yield
    reset_kernel_host()


def _state(*turn_ids: str, pending: bool = False) -> ThreadState:
    """A thread holding one question and answer per turn; its last turn waits if ``pending``."""
    messages = []
    for turn in turn_ids:
        messages += [HumanMessage("q", additional_kwargs={TURN_KEY: turn}), AIMessage("a")]
    waits = [PendingInterrupt("i", {}, tool_call_id="c", kind="client_tool")] if pending else []
    return ThreadState(messages, waits)


class Thread:
    """The states a thread goes through as it is read, the last one staying."""

    def __init__(self, *states: ThreadState) -> None:
        self.states = list(states)
        self.reads = 0

    async def read(self) -> ThreadState:
        self.reads += 1
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]


async def test_a_run_waits_for_the_earlier_turn_to_be_sent_and_done() -> None:
    turn, _ = next_turn("nb")
    thread = Thread(_state(), _state(turn, pending=True), _state(turn, pending=True), _state(turn))
    await asyncio.wait_for(EarlierTurn("nb", thread.read, wait=10).done(), 5)
    assert thread.reads == 4  # not sent, then waiting on a browser tool twice, then done


async def test_a_later_turn_on_the_thread_means_the_earlier_one_is_done() -> None:
    turn, _ = next_turn("nb")
    thread = Thread(_state(turn, "turn-later", pending=True))
    await asyncio.wait_for(EarlierTurn("nb", thread.read, wait=10).done(), 5)
    assert thread.reads == 1


async def test_with_no_earlier_turn_nothing_is_read() -> None:
    next_turn("another thread")
    thread = Thread(_state())
    await EarlierTurn("nb", thread.read, wait=10).done()
    assert thread.reads == 0


async def test_a_turn_nobody_sends_is_given_up_and_not_waited_for_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turns, "APPEAR_S", 0.05)
    next_turn("nb")
    thread = Thread(_state())
    earlier = EarlierTurn("nb", thread.read, wait=10)
    await asyncio.wait_for(earlier.done(), 5)
    reads = thread.reads
    assert reads > 1 and earlier.turn_id == ""  # given up: a headless run, no page sends it
    await earlier.done()  # waiting again (the thread was busy) reads nothing
    assert thread.reads == reads


async def test_a_turn_that_stays_busy_is_waited_for_only_until_the_wait_ends() -> None:
    turn, _ = next_turn("nb")
    thread = Thread(_state(turn, pending=True))
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.wait_for(EarlierTurn("nb", thread.read, wait=0.1, start=start).done(), 5)
    assert loop.time() - start >= 0.1
    assert thread.reads > 1
