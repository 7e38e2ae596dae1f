"""Our clients of the kernels a Jupyter server runs, one per kernel, opened on first use.

The pool reads a ``jupyter_server`` ``MultiKernelManager`` (``kernel_id in manager``,
``manager.get_kernel(kernel_id)``) and opens a :class:`KernelClient` with a fresh session id
from the kernel's manager, never the notebook's own client identity. A client stays open for
later runs; one whose kernel is gone is closed when next asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from gth_jupyter.kernel.access import ClientAccess
from gth_jupyter.kernel.client import KernelClient
from gth_jupyter.kernel.router import KernelClientError

__all__ = ["KernelPool"]

log = logging.getLogger(__name__)


class KernelPool:
    """Clients of ``manager``'s kernels, by kernel id."""

    def __init__(self, manager: Any, *, use_subshells: bool = True) -> None:
        self.manager = manager
        self._use_subshells = use_subshells
        self._clients: dict[str, KernelClient] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def holds(self, kernel_id: str) -> bool:
        """Whether the manager runs a kernel of this id."""
        try:
            return kernel_id in self.manager
        except Exception:
            return False

    def access(self, kernel_id: str) -> ClientAccess:
        """The kernel tools' way into kernel ``kernel_id`` (its client opens on first use)."""
        return ClientAccess(lambda: self.client(kernel_id))

    async def client(self, kernel_id: str) -> KernelClient:
        """An open client of ``kernel_id``; ``kernel_not_found`` once the kernel is gone."""
        if not self.holds(kernel_id):
            await self._drop(kernel_id)
            raise KernelClientError(
                f"no kernel {kernel_id!r} on this server", code="kernel_not_found"
            )
        lock = self._locks.setdefault(kernel_id, asyncio.Lock())
        async with lock:
            client = self._clients.get(kernel_id)
            if client is None:
                client = KernelClient.from_manager(
                    self.manager.get_kernel(kernel_id), use_subshells=self._use_subshells
                )
                try:
                    await client.start()
                except Exception as exc:
                    with contextlib.suppress(Exception):
                        await client.close()
                    raise KernelClientError(
                        f"kernel {kernel_id!r} does not answer: {exc}", code="kernel_unavailable"
                    ) from exc
                self._clients[kernel_id] = client
            return client

    async def _drop(self, kernel_id: str) -> None:
        client = self._clients.pop(kernel_id, None)
        self._locks.pop(kernel_id, None)
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def close(self) -> None:
        """Closes every client (the server is stopping)."""
        for kernel_id in list(self._clients):
            await self._drop(kernel_id)
