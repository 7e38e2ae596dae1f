"""This kernel, as the kernel tools of an agent running inside it reach it.

The agent of the comm transport (and of a ``Session``) runs on its own thread in the kernel.
Its introspection reads the user namespace where it is; its ``run_python`` goes to the kernel's
main shell through our own client of this kernel (a fresh session id, from the kernel's
connection file), so the code runs on the main thread as a cell would, after the cells queued
before it. While the main thread itself waits for the agent (``Session.ask`` in a cell) such
code could never start, so it is refused with a clear error instead of hanging.

:func:`kernel_id` is the id the Jupyter server knows this kernel by, which the widget sends
with each run so the server's agent reaches the same kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._host import kernel_host

if TYPE_CHECKING:
    from ...kernel.access import InKernelAccess
    from ...kernel.client import KernelClient

__all__ = ["in_kernel_access", "kernel_id", "main_thread_waiting"]

_KERNEL_FILE = re.compile(r"^kernel-(.+)\.json$")


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _connection_file() -> str | None:
    if getattr(_shell(), "kernel", None) is None:
        return None
    with contextlib.suppress(Exception):
        from ipykernel.connect import get_connection_file

        return str(get_connection_file())
    return None


def kernel_id() -> str:
    """This kernel's id on the Jupyter server that started it ("" when there is none): the
    server names each kernel's connection file ``kernel-<id>.json``."""
    found = _KERNEL_FILE.match(Path(_connection_file() or "").name)
    return found.group(1) if found else ""


@contextlib.contextmanager
def main_thread_waiting() -> Any:
    """Marks the main thread as waiting for the agent (so ``run_python`` refuses, not hangs)."""
    host = kernel_host()
    main = threading.current_thread() is threading.main_thread()
    if main:
        with host.lock:
            host.main_waiting += 1
    try:
        yield
    finally:
        if main:
            with host.lock:
                host.main_waiting -= 1


async def _open_client() -> KernelClient:
    """Our client of this kernel for the running loop (a client belongs to one loop)."""
    from ...kernel.client import KernelClient
    from ...kernel.router import KernelClientError

    host = kernel_host()
    loop = asyncio.get_running_loop()
    with host.lock:
        opening = host.opening.setdefault(loop, asyncio.Lock())
    async with opening:
        client = host.clients.get(loop)
        if client is None:
            connection = _connection_file()
            if connection is None:
                raise KernelClientError("this process is not a Jupyter kernel", code="no_kernel")
            client = KernelClient.from_connection(connection)
            await client.start()
            host.clients[loop] = client
    return client


def _namespace() -> dict[str, Any]:
    shell = _shell()
    return shell.user_ns if shell is not None else {}


def in_kernel_access() -> InKernelAccess | None:
    """The kernel tools' way into this kernel; ``None`` outside a kernel."""
    if _connection_file() is None:
        return None
    from ...kernel.access import InKernelAccess

    return InKernelAccess(
        _namespace, _open_client, main_blocked=lambda: kernel_host().main_waiting > 0
    )
