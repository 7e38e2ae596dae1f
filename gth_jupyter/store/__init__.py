"""Where threads live: the checkpointer, the run leases that keep one run per thread across
processes, and the index of who owns each thread. SQLite by default, memory on request,
PostgreSQL for many users and many servers."""

from __future__ import annotations

from .base import (
    DEFAULT_LEASE_SECONDS,
    RunLease,
    RunLeases,
    RunRecord,
    ThreadIndex,
    ThreadRecord,
)
from .checkpoint import KINDS, CheckpointStore, default_checkpoint_path
from .local import LocalLeases, MemoryThreads
from .sqlite import FileLeases, SqliteThreads

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "KINDS",
    "CheckpointStore",
    "FileLeases",
    "LocalLeases",
    "MemoryThreads",
    "RunLease",
    "RunLeases",
    "RunRecord",
    "SqliteThreads",
    "ThreadIndex",
    "ThreadRecord",
    "default_checkpoint_path",
]
