"""The AG-UI 1.0 protocol layer: requests in, events out, transport-free.

A host hands this layer the request bytes and a transport's ``write``/``flush``; it knows
events and the run contract (:mod:`gth_jupyter.agent.contract`), never LangGraph or HTTP.

- ``run.py``: parse and validate a ``RunAgentInput``, claim the thread, decide the plan
  (``plan.py``, through the agent's resume codec), and stream the run's AG-UI events;
- ``mapping.py``: run contract → AG-UI events; ``sse.py``: SSE framing with coalescing;
- ``pump.py``: one run to one client, shared by HTTP and the widget's comm;
- ``history.py``: a thread as a client rebuilds it;
- ``errors.py``: refusals with an HTTP status and a stable ``code``.
"""

from __future__ import annotations

from .errors import ProtocolError, from_agent_error
from .history import thread_view, to_agui_messages
from .pump import pump_sse
from .run import (
    DEFAULT_MAX_BODY_BYTES,
    KernelResolver,
    PreparedRun,
    RuntimeSource,
    kernel_id,
    parse_input,
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
    "RuntimeSource",
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
