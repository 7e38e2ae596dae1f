"""The AG-UI 1.0 protocol layer: requests in, events out, transport-free.

A host hands this layer the request bytes and a transport's ``write``/``flush``; it knows
events and the run contract (:mod:`gth_jupyter.contract`), never LangGraph or HTTP.

- ``run.py``: parse and validate a ``RunAgentInput``, claim the thread, decide the plan
  (``plan.py``, through the agent's resume codec), and stream the run's AG-UI events;
- ``mapping.py``: run contract → AG-UI events;
- ``owners.py``: who may read or run on a thread;
- ``history.py``: a thread as a client rebuilds it;
- ``errors.py``: refusals with an HTTP status and a stable ``code``.
"""

from __future__ import annotations

from .errors import ProtocolError, from_agent_error
from .history import thread_view, to_agui_messages
from .owners import Requester, admit_thread
from .request import (
    DEFAULT_MAX_BODY_BYTES,
    RunRequest,
    detached,
    kernel_id,
    parse_input,
    parse_request,
)
from .run import (
    KernelResolver,
    PreparedRun,
    RuntimeSource,
    plan_run,
    prepare_run,
    runtime_of,
    stream_events,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "KernelResolver",
    "PreparedRun",
    "ProtocolError",
    "Requester",
    "RunRequest",
    "RuntimeSource",
    "admit_thread",
    "detached",
    "from_agent_error",
    "kernel_id",
    "parse_input",
    "parse_request",
    "plan_run",
    "prepare_run",
    "runtime_of",
    "stream_events",
    "thread_view",
    "to_agui_messages",
]
