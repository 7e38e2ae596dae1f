"""The run contract, the bottom layer: what a host, the protocol layer, the agent, its tools and
its middleware agree on about a run, free of LangGraph.

Each name has one home, and code imports it from there:

- ``run``: :class:`~.run.RunPlan` (what a run does), the :data:`~.run.StreamItem` values it
  streams, :class:`~.run.RunEnd`, :class:`~.run.ThreadState`, the per-run
  :class:`~.run.RunContext`;
- ``events``: the renderer contract, :data:`~.events.AgentStreamEvent`;
- ``pending`` and ``resume``: what a suspended thread waits on, and the one codec that turns a
  client's answer into the value it resumes with;
- ``errors``: :class:`~.errors.CodedError`, the base of every coded error, and the agent's
  refusals;
- ``shared_state``, ``surfaces``: AG-UI shared state and A2UI surfaces as activity;
- ``kernel``: :class:`~.kernel.KernelAccess`, the notebook kernel as the kernel tools see it;
- ``messages``, ``names``: how a message is read, and the names and marks every layer shares.
- ``spec``: the JSON specs Python and the widget's JavaScript both read (ANSI escapes and a
  run's caps, inline image types, browser tools, approvals), so a constant has one home;
- ``text``: text as the agent hands it on (ANSI escapes stripped, long text capped).

This face imports nothing, so reading one name (the kernel's ``%gth`` reads ``DEFAULT_AGENT``)
loads only its module.
"""

__all__ = [
    "errors",
    "events",
    "kernel",
    "messages",
    "names",
    "pending",
    "resume",
    "run",
    "shared_state",
    "spec",
    "surfaces",
    "text",
]
