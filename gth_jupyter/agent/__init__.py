"""The agent: assembled from the configuration, run on LangGraph, described by one contract.

- :class:`AgentRegistry` (``registry.py``) is what a host owns: the agents it serves, built by
  the resolver (``resolver.py``: model, tools, middleware for a command) on first use.
- :class:`Runtime` (``runtime.py``) runs one agent's graph on a thread: it takes a
  :class:`~gth_jupyter.contract.run.RunPlan` and streams
  :data:`~gth_jupyter.contract.run.StreamItem` values, then one
  :class:`~gth_jupyter.contract.run.RunEnd`.

The types a host or the protocol layer reads live below this package, in
:mod:`gth_jupyter.contract`, free of LangGraph. Everything else here (graph building,
client-tool interrupts, stream translation) is private to the runtime. Names load on first use,
so importing this face stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .registry import AgentRegistry
    from .resolver import AgentParts, resolve_agent
    from .runtime import Runtime

__all__ = [
    "AgentParts",
    "AgentRegistry",
    "Runtime",
    "resolve_agent",
]

__getattr__ = lazy_names(
    __name__,
    resolver=("AgentParts", "resolve_agent"),
    registry=("AgentRegistry",),
    runtime=("Runtime",),
)
