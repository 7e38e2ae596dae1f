"""The AG-UI 1.0 protocol layer: requests in, events out, transport-free.

A host reads a request with this layer and, through its run service (:mod:`gth_jupyter.runs`),
gets the run's events back; it knows events and the run contract (:mod:`gth_jupyter.contract`),
never LangGraph or HTTP.

- ``request.py``: parse and validate a ``RunAgentInput``; ``run.py``: one run on its thread
  (:class:`ThreadRun`: claim it, decide the plan through ``plan.py`` and the resume codec,
  stream the run's AG-UI events, let the thread go);
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
    RunRequest,
    detached,
    kernel_id,
    parse_input,
    parse_request,
)
from .run import RuntimeSource, ThreadRun, runtime_of

__all__ = [
    "ProtocolError",
    "Requester",
    "RunRequest",
    "RuntimeSource",
    "ThreadRun",
    "admit_thread",
    "detached",
    "from_agent_error",
    "kernel_id",
    "parse_input",
    "parse_request",
    "runtime_of",
    "thread_view",
    "to_agui_messages",
]
