"""The order of ``%gth <prompt>`` turns on each thread, as the kernel executed them: the one
place the kernel side decides it.

Widgets render in whatever order the page gets to them (Run All, a slow output area), but the
kernel runs cells in order. Each prompt widget gets a turn id and the id of the turn the kernel
started before it on the same thread (:func:`next_turn`); its page waits for that turn to be
done before sending (the page's side of it: ``js/src/order.js``). A run the kernel starts on a
notebook's thread itself (``Session``) waits for that turn here, the same way
(:class:`EarlierTurn`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ._host import kernel_host

if TYPE_CHECKING:
    from ...contract.run import ThreadState

__all__ = ["APPEAR_S", "POLL_S", "EarlierTurn", "last_turn", "next_turn"]

#: How long a ``%gth`` turn the kernel started may take to reach the thread before it is not
#: waited for (no page shows it: a headless run).
APPEAR_S = 30.0
#: How often the thread is read again while waiting.
POLL_S = 0.25


def next_turn(thread_id: str) -> tuple[str, str]:
    """A new turn on ``thread_id`` and the turn it follows (``""`` for the kernel's first)."""
    turn = f"turn-{uuid.uuid4().hex}"
    host = kernel_host()
    with host.lock:
        after = host.last_turns.get(thread_id, "")
        host.last_turns[thread_id] = turn
    return turn, after


def last_turn(thread_id: str) -> str:
    """The last turn the kernel started on ``thread_id`` (``""`` for none)."""
    host = kernel_host()
    with host.lock:
        return host.last_turns.get(thread_id, "")


class EarlierTurn:
    """The ``%gth`` turn the kernel started last on ``thread_id``, which a run the kernel starts
    there itself waits for: done once its page sent it and it neither runs nor waits on a
    browser tool or an approval.

    Run All executes a session's cell right after the ``%gth`` cells above it, before their
    pages have sent anything. A turn that has not appeared on the thread within
    :data:`APPEAR_S` is not waited for (nobody will send it); one that has is waited for until
    ``wait`` seconds after ``start`` (the event loop's time; default: now).

    Args:
        thread_id: the thread the run takes its turn on.
        read: reads the thread's state as it is now.
        wait: how long, at most, to wait.
        start: when the wait began, on the running loop's clock.
    """

    def __init__(
        self,
        thread_id: str,
        read: Callable[[], Awaitable[ThreadState]],
        wait: float,
        start: float | None = None,
    ) -> None:
        self.turn_id = last_turn(thread_id)
        self._read = read
        self._wait = wait
        self._start = start

    async def done(self) -> None:
        """Returns once the earlier turn is done, given up, or waited for ``wait`` seconds."""
        loop = asyncio.get_running_loop()
        if self._start is None:
            self._start = loop.time()
        while self.turn_id:
            elapsed = loop.time() - self._start
            if elapsed >= self._wait:
                return
            state = await self._read()
            turns = state.turns()
            if self.turn_id not in [t.turn_id for t in turns]:
                if elapsed >= min(APPEAR_S, self._wait):
                    self.turn_id = ""  # nobody will send it
                    return
            elif turns[-1].turn_id != self.turn_id or not state.pending:
                return
            await asyncio.sleep(POLL_S)
