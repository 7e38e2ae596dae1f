"""The order of ``%gth <prompt>`` turns on each thread, as the kernel executed them.

Widgets render in whatever order the page gets to them (Run All, a slow output area), but the
kernel runs cells in order. Each prompt widget gets a turn id and the id of the turn the kernel
started before it on the same thread; its page waits for that turn to be done before sending.
"""

from __future__ import annotations

import threading
import uuid

__all__ = ["last_turn", "next_turn"]

_lock = threading.Lock()
_last: dict[str, str] = {}


def next_turn(thread_id: str) -> tuple[str, str]:
    """A new turn on ``thread_id`` and the turn it follows (``""`` for the kernel's first)."""
    turn = f"turn-{uuid.uuid4().hex}"
    with _lock:
        after = _last.get(thread_id, "")
        _last[thread_id] = turn
    return turn, after


def last_turn(thread_id: str) -> str:
    """The last turn the kernel started on ``thread_id`` (``""`` for none)."""
    with _lock:
        return _last.get(thread_id, "")
