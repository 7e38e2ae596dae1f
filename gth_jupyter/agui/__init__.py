"""The AG-UI 1.0 protocol layer: requests in, events out, transport-free.

A host hands this layer the request bytes and a transport's ``write``/``flush``; it knows
events and the run contract (:mod:`gth_jupyter.contract`), never LangGraph or HTTP.

- ``run.py``: parse and validate a ``RunAgentInput``, claim the thread, decide the plan
  (``plan.py``, through the agent's resume codec), and stream the run's AG-UI events;
- ``mapping.py``: run contract → AG-UI events; ``sse.py``: SSE framing with coalescing;
- ``pump.py``: one run to one client, shared by HTTP and the widget's comm;
- ``journal.py``: every frame of a run, numbered, for a client that re-attaches;
- ``owners.py``: who may read or run on a thread;
- ``history.py``: a thread as a client rebuilds it;
- ``errors.py``: refusals with an HTTP status and a stable ``code``.
"""

from __future__ import annotations

from .errors import ProtocolError, from_agent_error
from .history import thread_view, to_agui_messages
from .journal import Journals, JournalTrimmedError, LocalJournals, RunInfo, RunJournal
from .owners import Requester, admit_thread
from .pump import SSEPump, pump_sse
from .run import (
    DEFAULT_MAX_BODY_BYTES,
    KernelResolver,
    PreparedRun,
    RuntimeSource,
    detached,
    kernel_id,
    parse_input,
    plan_run,
    prepare_run,
    runtime_of,
    stream_events,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "JournalTrimmedError",
    "Journals",
    "KernelResolver",
    "LocalJournals",
    "PreparedRun",
    "ProtocolError",
    "Requester",
    "RunInfo",
    "RunJournal",
    "RuntimeSource",
    "SSEPump",
    "admit_thread",
    "detached",
    "from_agent_error",
    "kernel_id",
    "parse_input",
    "plan_run",
    "prepare_run",
    "pump_sse",
    "runtime_of",
    "stream_events",
    "thread_view",
    "to_agui_messages",
]
