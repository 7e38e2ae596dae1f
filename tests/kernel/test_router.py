"""Replies routed by msg_id: many requests in flight on one client each get their own answer."""

from __future__ import annotations

import asyncio

from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.kernel import KernelClient, list_variables, run_python


async def test_concurrent_requests_on_one_client_get_their_own_replies(
    kernel: KernelClient,
) -> None:
    runs = [run_python(kernel, f"print({i})\n{i} * 10") for i in range(10)]
    looks = [list_variables(kernel) for _ in range(5)]
    results = await asyncio.gather(*runs)
    answers = await asyncio.gather(*looks)
    assert [(r.stdout, r.result) for r in results] == [(f"{i}\n", str(i * 10)) for i in range(10)]
    assert all(a.error is None and a.shell == "subshell" for a in answers)


async def test_another_clients_traffic_is_not_mistaken_for_ours(
    manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    other = KernelClient.from_connection(manager.connection_file)
    async with other:
        theirs = asyncio.create_task(run_python(other, "print('theirs')"))
        ours = await run_python(kernel, "print('ours')")
        assert ours.stdout == "ours\n"
        assert (await theirs).stdout == "theirs\n"
