"""The agent: assembled from the configuration, run on LangGraph, described by one contract.

- :class:`AgentRegistry` (``registry.py``) is what a host owns: the agents it serves, built by
  the resolver (``resolver.py``: model, tools, middleware for a command) on first use.
- :class:`Runtime` (``runtime.py``) runs one agent's graph on a thread: it takes a
  :class:`~gth_jupyter.agent.contract.RunPlan` and streams
  :data:`~gth_jupyter.agent.contract.StreamItem` values, then one
  :class:`~gth_jupyter.agent.contract.RunEnd`.
- ``contract.py`` holds every type a host or the protocol layer reads, free of LangGraph; it
  re-exports the resume codec (``resume.py``: the one place an answer to a suspended call is
  encoded and read back) and the agent's refusals (``errors.py``).

Everything else here (graph building, client-tool interrupts, stream translation, checkpoints)
is private to the runtime. Names load on first use, so importing the contract stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .checkpoint import CheckpointStore
    from .registry import DEFAULT_AGENT, AgentRegistry
    from .resolver import AgentParts, resolve_agent
    from .runtime import Runtime

__all__ = [
    "DEFAULT_AGENT",
    "AgentParts",
    "AgentRegistry",
    "CheckpointStore",
    "Runtime",
    "resolve_agent",
]

_LAZY = {
    "AgentParts": "resolver",
    "AgentRegistry": "registry",
    "CheckpointStore": "checkpoint",
    "DEFAULT_AGENT": "names",
    "Runtime": "runtime",
    "resolve_agent": "resolver",
}


__getattr__ = lazy_names(__name__, _LAZY)
