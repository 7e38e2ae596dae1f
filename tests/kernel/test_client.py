"""Our own kernel client: own session, replies by msg_id, subshells while a cell runs."""

from __future__ import annotations

import asyncio

from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.kernel import KernelClient, list_variables, run_python


async def test_the_client_has_its_own_session_and_sees_subshells(
    manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    assert kernel.session_id != manager.session.session
    assert kernel.subshells_supported
    execution = await kernel.execute("1 + 1")
    assert execution.completed and execution.shell == "main"
    assert execution.outputs[-1]["content"]["data"]["text/plain"] == "2"


async def test_a_connection_file_is_enough(manager: AsyncKernelManager) -> None:
    async with KernelClient.from_connection(manager.connection_file) as client:
        result = await run_python(client, "print('hi')")
    assert result.stdout == "hi\n"


async def test_introspection_answers_on_a_subshell_while_a_cell_runs(
    kernel: KernelClient,
) -> None:
    await run_python(kernel, "data = list(range(10))")
    cell = asyncio.create_task(kernel.execute("import time; time.sleep(3)"))
    await asyncio.sleep(0.3)
    answer = await list_variables(kernel)
    assert not cell.done(), "the subshell answered only after the cell"
    assert answer.shell == "subshell" and answer.elapsed < 1.0
    assert [v["name"] for v in answer.data["variables"]] == ["data"]
    assert (await cell).completed


async def test_without_subshells_introspection_queues_on_the_main_shell(
    manager: AsyncKernelManager,
) -> None:
    async with KernelClient.from_manager(manager, use_subshells=False) as client:
        cell = asyncio.create_task(client.execute("import time; time.sleep(1.5)"))
        await asyncio.sleep(0.3)
        answer = await list_variables(client)
        assert cell.done(), "the main shell answered before the running cell ended"
        assert answer.shell == "main" and "main shell" in answer.note
        assert answer.elapsed > 0.8


async def test_a_busy_main_shell_times_out_introspection_without_an_interrupt(
    manager: AsyncKernelManager,
) -> None:
    async with KernelClient.from_manager(manager, use_subshells=False) as client:
        cell = asyncio.create_task(run_python(client, "import time; time.sleep(2); 'done'"))
        await asyncio.sleep(0.3)
        answer = await list_variables(client, shell="main", timeout=0.3)
        assert answer.error == "kernel_busy"
        assert (await cell).result == "'done'", "the user's cell was interrupted"


async def test_a_kernel_restart_gets_a_new_subshell(
    manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    assert (await list_variables(kernel)).shell == "subshell"
    await manager.restart_kernel(now=True)
    await kernel.ready()  # the new kernel listens before anything is sent to it
    await run_python(kernel, "after_restart = 1", timeout=30, queue_timeout=60)
    answer = await list_variables(kernel)
    assert answer.shell == "subshell", answer.data
    assert [v["name"] for v in answer.data["variables"]] == ["after_restart"]


async def test_without_a_manager_a_timeout_interrupts_by_message(
    manager: AsyncKernelManager,
) -> None:
    async with KernelClient.from_connection(manager.connection_file) as client:
        result = await run_python(client, "import time\ntime.sleep(30)", timeout=1.0)
        assert result.interrupted and result.error is not None
        assert result.error["ename"] == "KeyboardInterrupt"
        assert (await run_python(client, "'alive'")).result == "'alive'"


async def test_a_client_opens_beside_a_running_cell_without_waiting_for_it(
    manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    """Its readiness check goes on the control channel, which the cell does not hold."""
    cell = asyncio.create_task(kernel.execute("import time; time.sleep(5)", timeout=30))
    await asyncio.sleep(0.5)
    async with KernelClient.from_manager(manager) as late:
        assert not cell.done()  # it did not wait for the cell
        assert late.kernel_info["status"] == "ok"
    await cell
