"""The kernel engine: the agent's kernel tools at work in a live Jupyter kernel.

:class:`KernelClient` is our own client of a kernel (its own session id, replies routed by
``msg_id``, ipykernel 7 subshells where offered, interrupt on timeout). On it,
:func:`list_variables` and :func:`describe_variable` look at the user's namespace silently and
read-only (on a subshell, so they answer while a cell runs), and :func:`run_python` runs agent
code on the main shell and shapes its outputs for a model (text capped, images apart).
:class:`ClientAccess` (from the Jupyter server, through a :class:`KernelPool`) and
:class:`InKernelAccess` (from the agent's thread inside the kernel) give the agent's kernel tools
the same answers wherever the agent runs.

This package knows ``jupyter_client`` and nothing of the agent, its transports or its hosts.
"""

from gth_jupyter.kernel.access import ClientAccess, InKernelAccess
from gth_jupyter.kernel.client import Execution, KernelClient
from gth_jupyter.kernel.execute import Image, RunResult, run_python
from gth_jupyter.kernel.introspect import (
    DataContext,
    Introspection,
    describe_variable,
    list_variables,
)
from gth_jupyter.kernel.pool import KernelPool
from gth_jupyter.kernel.router import KernelClientError

__all__ = [
    "ClientAccess",
    "DataContext",
    "Execution",
    "Image",
    "InKernelAccess",
    "Introspection",
    "KernelClient",
    "KernelClientError",
    "KernelPool",
    "RunResult",
    "describe_variable",
    "list_variables",
    "run_python",
]
