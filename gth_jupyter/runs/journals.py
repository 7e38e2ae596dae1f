"""The journals a host keeps its runs' frames in: in this process, or in Redis when one is
configured, so that a client can re-attach to a run through any server sharing it.

In Redis, a server's keys carry its owner (``gth:{<role>}:``, see
:mod:`gth_jupyter.store.redis_users`): the owner's servers find each other's runs, and the
owner's own Redis user, which may touch those keys alone, suffices."""

from __future__ import annotations

from .journal import BUDGET_BYTES, USER_BUDGET_BYTES, Journals, LocalJournals

__all__ = ["make_journals"]


def make_journals(
    redis_url: str | None,
    owner: str,
    *,
    budget_bytes: int = BUDGET_BYTES,
    user_budget_bytes: int = USER_BUDGET_BYTES,
) -> Journals:
    """Redis journals for ``redis_url`` (the ``redis`` extra) under the keys of ``owner`` (the
    user the server runs for), else in-process ones; either keeps the frames
    it holds in this process within ``budget_bytes``, and each user's within
    ``user_budget_bytes`` (see :class:`~gth_jupyter.runs.LocalJournals`)."""
    budgets = {"budget_bytes": budget_bytes, "user_budget_bytes": user_budget_bytes}
    if not redis_url:
        return LocalJournals(**budgets)
    from ..store.redis_users import journal_prefix
    from .redis_shipper import RedisJournals

    return RedisJournals(redis_url, prefix=journal_prefix(owner), **budgets)
