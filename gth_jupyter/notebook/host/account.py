"""``%gth --usage``: the kernel reads the thread's account from the store it shares with the
server (the thread view's ``usage``), without starting the agent's MCP servers."""

from __future__ import annotations

from typing import Any

from ._host import kernel_host

__all__ = ["thread_account"]

READ_S = 30.0


async def _read(thread: str, agent: str) -> dict[str, Any]:
    from ...agui.history import thread_view
    from .cell_output import reader

    runtime = await reader(kernel_host().registry(), agent)
    return await thread_view(runtime, thread)


def thread_account(thread: str, agent: str) -> dict[str, str]:
    """The account of ``thread`` as a table (``copy/account.py``), read on the kernel's loop."""
    from ...copy.account import account_table

    view = kernel_host().loop().submit(_read(thread, agent)).result(timeout=READ_S)
    return account_table(view)
