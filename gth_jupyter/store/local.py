"""Leases and the thread index for a store only this process sees (memory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

from .base import RunLease, RunRecord, ThreadRecord

__all__ = ["LocalLeases", "MemoryThreads", "utc_now"]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class _NoLease:
    def release(self) -> None:
        pass


class LocalLeases:
    """For a store no other process can see: every lease is granted (the runtime's own table of
    busy threads is all the exclusion needed)."""

    async def acquire(self, thread_id: str, run_id: str) -> RunLease | None:
        return _NoLease()

    async def holder(self, thread_id: str) -> str | None:
        return None


class MemoryThreads:
    """The thread index in a dict."""

    def __init__(self) -> None:
        self._threads: dict[str, ThreadRecord] = {}
        self._runs: dict[str, dict[str, RunRecord]] = {}
        self._calls: dict[str, dict[str, str]] = {}

    async def owner(self, thread_id: str) -> str | None:
        record = self._threads.get(thread_id)
        return record.owner if record is not None else None

    async def claim(self, thread_id: str, owner: str) -> str:
        now = utc_now()
        record = self._threads.get(thread_id)
        if record is None:
            record = ThreadRecord(thread_id, owner, now, now)
        else:
            record = ThreadRecord(thread_id, record.owner, record.created_at, now)
        self._threads[thread_id] = record
        return record.owner

    async def list(self, owner: str | None) -> list[ThreadRecord]:
        found = [r for r in self._threads.values() if owner is None or r.owner == owner]
        return sorted(found, key=lambda r: r.updated_at, reverse=True)

    async def add_run(self, thread_id: str, record: RunRecord) -> None:
        self._runs.setdefault(thread_id, {}).setdefault(record.run_id, record)

    async def runs(self, thread_id: str) -> Sequence[RunRecord]:
        return list(self._runs.get(thread_id, {}).values())

    async def add_model_calls(self, thread_id: str, calls: Mapping[str, str]) -> None:
        kept = self._calls.setdefault(thread_id, {})
        for message_id, record in calls.items():
            kept.setdefault(message_id, record)

    async def model_calls(self, thread_id: str, message_ids: Sequence[str]) -> dict[str, str]:
        kept = self._calls.get(thread_id, {})
        return {m: kept[m] for m in message_ids if m in kept}
