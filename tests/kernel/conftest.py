"""Real ipykernel 7 kernels for the kernel-engine tests, running this venv's Python in tmp_path."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.kernel import KernelClient


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[AsyncKernelManager]:
    km = AsyncKernelManager(kernel_name="python3")
    km.kernel_spec.argv[0] = sys.executable  # this venv's Python
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "MPLBACKEND": "agg"}
    await km.start_kernel(cwd=str(tmp_path), env=env)
    try:
        yield km
    finally:
        await km.shutdown_kernel(now=True)


@pytest.fixture
async def kernel(manager: AsyncKernelManager) -> AsyncIterator[KernelClient]:
    client = KernelClient.from_manager(manager)
    await client.start()
    try:
        yield client
    finally:
        await client.close()


async def user_names(client: KernelClient) -> list[str]:
    """The names in the user namespace, read without adding any."""
    execution = await client.execute(
        "", silent=True, user_expressions={"names": "sorted(globals())"}, shell="main"
    )
    text: Any = execution.reply["user_expressions"]["names"]["data"]["text/plain"]
    import ast

    return list(ast.literal_eval(text))


async def evaluate(client: KernelClient, expression: str) -> Any:
    """The value of ``expression`` in the user namespace (a literal), read silently on the main
    shell without blocking on anything (a test polls with it while agent code waits its turn)."""
    execution = await client.execute(
        "", silent=True, user_expressions={"v": expression}, shell="main"
    )
    answer = execution.reply["user_expressions"]["v"]
    assert answer["status"] == "ok", answer
    import ast

    return ast.literal_eval(answer["data"]["text/plain"])
