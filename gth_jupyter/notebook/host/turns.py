"""The order of ``%gth <prompt>`` turns on each thread, as the kernel executed them.

Widgets render in whatever order the page gets to them (Run All, a slow output area), but the
kernel runs cells in order. Each prompt widget gets a turn id and the id of the turn the kernel
started before it on the same thread; its page waits for that turn to be done before sending.
"""

from __future__ import annotations

import uuid

from ._host import kernel_host

__all__ = ["last_turn", "next_turn"]


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
