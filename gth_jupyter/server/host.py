"""What a host hands its handlers: one typed object, as jupyter_server hands a handler its
``kernel_manager``.

The Jupyter extension and the standalone server each build one :class:`GthHost` (the standalone
server a :class:`~gth_jupyter.server.standalone.StandaloneHost`, with its token and CORS) and
put it in the tornado settings under :data:`HOST_KEY`; a handler reads it as ``self.host``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..agent import AgentRegistry
from ..agui import DEFAULT_MAX_BODY_BYTES
from ..runs import RunService

__all__ = ["HOST_KEY", "GthHost"]

#: The settings key the host object is under (the only one of ours).
HOST_KEY = "gth_host"


@dataclass
class GthHost:
    """The long-lived objects every route reaches: the agents (``registry``), the run service
    (``runs``: journals, running runs, kernels), the largest body accepted, and the users who
    may read every user's threads and runs (``admin_users``)."""

    registry: AgentRegistry
    runs: RunService
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    admin_users: frozenset[str] = frozenset()
