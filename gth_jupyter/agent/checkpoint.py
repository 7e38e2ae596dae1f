"""The store threads live in (see :mod:`gth_jupyter.store`), under the name the agent's hosts
have always imported it by."""

from __future__ import annotations

from ..store import (
    CheckpointStore,
    FileLeases,
    LocalLeases,
    RunLease,
    RunLeases,
    default_checkpoint_path,
)

__all__ = [
    "CheckpointStore",
    "FileLeases",
    "LocalLeases",
    "RunLease",
    "RunLeases",
    "default_checkpoint_path",
]
