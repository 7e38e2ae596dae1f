"""The comm side: an agent on its own thread inside the kernel reaches that kernel's namespace in
place and runs code on the kernel's main thread, as a cell would; the answers have the same
shape as the server's. Runs inside a real kernel, driven by our own client."""

from __future__ import annotations

import asyncio
import json

from gth_jupyter.kernel import KernelClient
from tests.kernel.conftest import evaluate

START = """
import threading
from gth_jupyter.notebook.host.kernel_access import in_kernel_access, kernel_id
from gth_jupyter.notebook.host import kernel_host
_gth_access = in_kernel_access()
sales = {"north": 3, "south": 4}
_gth_futures = {
    "list": kernel_host().loop().submit(_gth_access.list_variables(0, 50)),
    "describe": kernel_host().loop().submit(_gth_access.describe_variable("sales", "sample")),
    "run": kernel_host().loop().submit(
        _gth_access.run_python("import threading\\nprint(threading.current_thread().name)\\n"
                               "agent_total = sum(sales.values())\\nagent_total", 30)),
}
"""


async def test_in_kernel_introspection_and_code_on_the_main_thread(kernel: KernelClient) -> None:
    loop = asyncio.get_running_loop()
    began = loop.time()
    started = await kernel.execute(START, shell="main", timeout=60)
    assert started.reply["status"] == "ok", started.reply
    # The main shell must stay free for run_python: poll, never block a cell on the future.
    for _ in range(300):
        if await evaluate(kernel, "all(f.done() for f in _gth_futures.values())"):
            break
        await asyncio.sleep(0.1)
    print("answered in", loop.time() - began)
    answers = {
        name: json.loads(
            await evaluate(kernel, f"__import__('json').dumps(_gth_futures[{name!r}].result())")
        )
        for name in ("list", "describe", "run")
    }
    listed = answers["list"]
    assert [v["name"] for v in listed["variables"]] == ["sales"] or "agent_total" in [
        v["name"] for v in listed["variables"]
    ]
    assert listed["ranOn"] == "in-kernel"
    assert answers["describe"]["repr"] == repr({"north": 3, "south": 4})
    run = answers["run"]
    assert run["status"] == "ok"
    assert run["stdout"] == "MainThread\n"
    assert run["result"] == "7"
    assert await evaluate(kernel, "agent_total") == 7
    # A server names the connection file kernel-<id>.json; this kernel's manager did too or not.
    connection = await evaluate(
        kernel, "__import__('ipykernel.connect').connect.get_connection_file()"
    )
    expected = connection.rsplit("kernel-", 1)[-1][:-5] if "kernel-" in connection else ""
    assert await evaluate(kernel, "kernel_id()") == expected


async def test_code_is_refused_while_the_main_thread_waits_for_the_agent(
    kernel: KernelClient,
) -> None:
    code = (
        "from gth_jupyter.notebook.host.kernel_access import (\n"
        "    in_kernel_access, main_thread_waiting)\n"
        "from gth_jupyter.notebook.host import kernel_host\n"
        "with main_thread_waiting():\n"
        "    _gth_blocked = kernel_host().loop().run(in_kernel_access().run_python('1', 5))\n"
    )
    execution = await kernel.execute(code, shell="main", timeout=30)
    assert execution.reply["status"] == "ok", execution.reply
    assert (await evaluate(kernel, "_gth_blocked['error']")) == "kernel_blocked"
