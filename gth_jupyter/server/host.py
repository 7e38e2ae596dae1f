"""What a host hands its handlers: one typed object, as jupyter_server hands a handler its
``kernel_manager``.

The Jupyter extension and the standalone server each build one :class:`GthHost` (the standalone
server a :class:`~gth_jupyter.server.standalone.StandaloneHost`, with its token and CORS) and
put it in the tornado settings under :data:`HOST_KEY`; a handler reads it as ``self.host``.
Which notebook kernel a run's kernel tools work in is the host's to say, and to refuse, before
the run starts (:meth:`GthHost.kernel_for`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..agent.registry import AgentRegistry
from ..agui.errors import kernel_forbidden, kernel_not_found
from ..config.effective import DEFAULT_MAX_BODY_BYTES
from ..contract.kernel import KernelAccess
from ..kernel.pool import KernelPool
from ..runs.service import RunService

__all__ = ["HOST_KEY", "GthHost"]

#: The settings key the host object is under (the only one of ours).
HOST_KEY = "gth_host"


@dataclass
class GthHost:
    """The long-lived objects every route reaches: the agents (``registry``), the run service
    (``runs``: journals, running runs), the largest body accepted, the users who may read every
    user's threads and runs (``admin_users``), and our clients of the server's notebook kernels
    (``kernels``; ``None``: a host without kernels)."""

    registry: AgentRegistry
    runs: RunService
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    admin_users: frozenset[str] = frozenset()
    kernels: KernelPool | None = None

    async def kernel_for(
        self, kernel_id: str | None, may_execute: Callable[[], Awaitable[bool]]
    ) -> KernelAccess | None:
        """The kernel a run's kernel tools work in: the one its widget names, if the requester
        may execute code in kernels (``403 kernel_forbidden`` otherwise, asked first, so that a
        refused user learns nothing of which kernels run) and this host runs it (``404
        kernel_not_found`` otherwise); ``None`` when the request names none. Asked before the
        run starts, so a refusal claims no thread."""
        if kernel_id is None:
            return None
        if not await may_execute():
            raise kernel_forbidden(kernel_id)
        pool = self.kernels
        if pool is None or not pool.holds(kernel_id):
            raise kernel_not_found(kernel_id)
        access: KernelAccess = pool.access(kernel_id)
        return access

    async def close(self) -> None:
        """Closes the run service's journals (the shared ones flush what they still hold) and
        our clients of the kernels."""
        if self.kernels is not None:
            await self.kernels.close()
        await self.runs.close()
