"""What every thread store gives the runtime and the hosts, whatever its engine.

- **Run leases** (:class:`RunLeases`) keep one run per thread across every process sharing the
  store: a lease is held for the length of a run, and a second holder is refused at once.
- **The thread index** (:class:`ThreadIndex`) records who owns each thread, so a host answers
  another user's request as if the thread did not exist, and lists a user's own threads; and
  the runs on each thread (:class:`RunRecord`), each with the run it continued, so a thread's
  branches can be listed without reading its checkpoints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "RunLease",
    "RunLeases",
    "RunRecord",
    "ThreadIndex",
    "ThreadRecord",
]

#: How long a lease outlives a holder that stopped renewing it (``runLeaseSeconds``).
DEFAULT_LEASE_SECONDS = 30.0


class RunLease(Protocol):
    """The right to run on one thread, held until ``release`` (idempotent, never raises)."""

    def release(self) -> None: ...


class RunLeases(Protocol):
    """Hands out run leases on threads, across every process that shares a store."""

    async def acquire(self, thread_id: str, run_id: str) -> RunLease | None:
        """A lease on ``thread_id`` for run ``run_id``, or ``None`` at once when another
        holder has it."""
        ...

    async def holder(self, thread_id: str) -> str | None:
        """The run id holding ``thread_id`` (``""`` when a holder is known but not its run),
        or ``None`` when it is free."""
        ...


@dataclass(frozen=True)
class ThreadRecord:
    """One thread in the index: its owner and when it was created and last run (UTC, ISO)."""

    thread_id: str
    owner: str
    created_at: str
    updated_at: str

    def to_json(self) -> dict[str, str]:
        return {
            "threadId": self.thread_id,
            "owner": self.owner,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


@dataclass(frozen=True)
class RunRecord:
    """One run on a thread: the run whose end it started from (``""``: the thread's start),
    the widget turn and notebook cell it ran for (``""`` when none), and when it started."""

    run_id: str
    parent_run_id: str = ""
    turn_id: str = ""
    cell_id: str = ""
    created_at: str = ""


class ThreadIndex(Protocol):
    """Who owns each thread."""

    async def owner(self, thread_id: str) -> str | None:
        """The thread's owner, or ``None`` when the index has no such thread."""
        ...

    async def claim(self, thread_id: str, owner: str) -> str:
        """Records ``owner`` for a thread the index does not hold yet; returns the thread's
        owner (``owner``, or whoever holds it already), and marks it as just used."""
        ...

    async def list(self, owner: str | None) -> list[ThreadRecord]:
        """``owner``'s threads (every thread for ``None``), the latest used first."""
        ...

    async def add_run(self, thread_id: str, record: RunRecord) -> None:
        """Records a run on ``thread_id`` (a run id recorded again keeps its first record)."""
        ...

    async def runs(self, thread_id: str) -> Sequence[RunRecord]:
        """The runs recorded on ``thread_id``, oldest first."""
        ...

    async def add_model_calls(self, thread_id: str, calls: Mapping[str, str]) -> None:
        """Keeps what each model call on ``thread_id`` was sent (JSON text, capped by its
        writer), by the id of the assistant message it answered with; one kept again stays."""
        ...

    async def model_calls(self, thread_id: str, message_ids: Sequence[str]) -> dict[str, str]:
        """The calls kept for those assistant messages (those it has), by message id."""
        ...
