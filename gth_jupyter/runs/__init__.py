"""The run service: how a run starts and reaches its clients, live and after they re-attach.

- ``pump.py``: one run's events streamed to one client as SSE bytes (the same code for HTTP and
  the widget's comm), and into the run's journal;
- ``sse.py``: SSE framing with coalescing and keep-alives;
- ``journal.py``: every frame of a run, numbered, kept in this process for a client that
  re-attaches; ``redis_shipper.py`` ships them to Redis Streams and ``redis_follower.py`` follows
  a run of another process from there; ``journals.py`` picks one for a host.

- ``service.py``: :class:`RunService`, the one object each host process (the Jupyter
  extension, the standalone server, the kernel's comm transport and headless turns) starts,
  follows, re-attaches to and stops runs through: :meth:`RunService.start` is the one way any
  run starts (a ``Session``'s too), into a :class:`Transport` or to a reader in this process.

It stands on the protocol layer (:mod:`gth_jupyter.agui`) and under both hosts.
"""

from __future__ import annotations

from .journal import Journals, JournalTrimmedError, LocalJournals, RunInfo, RunJournal
from .journals import make_journals
from .pump import SSEPump
from .service import Consume, Retry, RunService, Transport

__all__ = [
    "Consume",
    "JournalTrimmedError",
    "Journals",
    "LocalJournals",
    "Retry",
    "RunInfo",
    "RunJournal",
    "RunService",
    "SSEPump",
    "Transport",
    "make_journals",
]
