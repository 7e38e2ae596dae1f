"""The journals a host keeps its runs' frames in: in this process, or in Redis when one is
configured, so that a client can re-attach to a run through any server sharing it."""

from __future__ import annotations

from ..agui import Journals, LocalJournals

__all__ = ["make_journals"]


def make_journals(redis_url: str | None) -> Journals:
    """Redis journals for ``redis_url`` (the ``redis`` extra), else in-process ones."""
    if not redis_url:
        return LocalJournals()
    from ..agui.journal_redis import RedisJournals

    return RedisJournals(redis_url)
