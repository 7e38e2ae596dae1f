"""Kernel tools latency: introspection on a subshell vs the main shell, idle and behind a cell.

Starts a real ipykernel (this venv's Python) with a namespace of 50 small variables (and a
1,000-row DataFrame when pandas is installed), then measures with our own
:class:`gth_jupyter.kernel.KernelClient`:

- ``list_variables`` on an idle kernel, on a subshell and on the main shell;
- ``list_variables`` **while a cell runs** on the main shell (``--cell`` seconds, 10 by
  default; a pure-Python busy loop, which holds the GIL, and ``time.sleep``): on a subshell,
  requests one after another until the cell ends; on the main shell (subshells turned off, the
  fallback), a request started every 0.5 s, each waiting behind the cell;
- ``run_python`` round trip of a trivial statement (``agent_x = 1``) on an idle kernel.

Run from the repository root::

    .venv/bin/python bench/kernel_tools.py            # 10 s cells, 200 idle samples
    .venv/bin/python bench/kernel_tools.py --quick    # 2 s cells, 30 idle samples
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import platform
import statistics
import sys
import tempfile
import time
from typing import Any

from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.kernel import KernelClient, list_variables, run_python

SETUP = "\n".join(f"v{i:02d} = list(range({i}))" for i in range(50))
FRAME = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'month': [f'2026-{m % 12 + 1:02d}' for m in range(1000)],"
    " 'revenue': [float(i) for i in range(1000)]})"
)
CELLS = {
    "busy loop": "import time as agent_t\nagent_end = agent_t.time() + {s}\n"
    "while agent_t.time() < agent_end:\n    pass",
    "sleep": "import time as agent_t\nagent_t.sleep({s})",
}


def percentiles(samples: list[float]) -> tuple[float, float, int]:
    """p50 and p95 in milliseconds, and the sample count."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered) * 1000, p95 * 1000, len(ordered)


def report(label: str, samples: list[float]) -> None:
    p50, p95, n = percentiles(samples)
    print(f"  {label:<48} p50 {p50:9.1f} ms   p95 {p95:9.1f} ms   (n={n})")


async def timed_list(client: KernelClient, shell: Any) -> float:
    started = time.perf_counter()
    answer = await list_variables(client, shell=shell, timeout=60)
    assert answer.error is None, answer.data
    return time.perf_counter() - started


async def idle(client: KernelClient, shell: Any, n: int) -> list[float]:
    await timed_list(client, shell)  # warm-up
    return [await timed_list(client, shell) for _ in range(n)]


async def during_cell_subshell(client: KernelClient, seconds: float, cell: str) -> list[float]:
    running = asyncio.create_task(client.execute(cell.format(s=seconds), timeout=seconds + 30))
    await asyncio.sleep(0.2)
    samples = []
    while not running.done():
        samples.append(await timed_list(client, "subshell"))
        await asyncio.sleep(0.01)
    await running
    return samples[:-1] if len(samples) > 1 else samples  # the last may straddle the cell's end


async def during_cell_main(client: KernelClient, seconds: float, cell: str) -> list[float]:
    running = asyncio.create_task(client.execute(cell.format(s=seconds), timeout=seconds + 30))
    await asyncio.sleep(0.2)
    waiting: list[asyncio.Task[float]] = []
    while not running.done() and len(waiting) < seconds / 0.5 - 1:
        waiting.append(asyncio.create_task(timed_list(client, "main")))
        await asyncio.sleep(0.5)
    await running
    return list(await asyncio.gather(*waiting))


async def main(quick: bool, cell_seconds: float) -> None:
    idle_n = 30 if quick else 200
    seconds = 2.0 if quick else cell_seconds
    with tempfile.TemporaryDirectory() as home:
        manager = AsyncKernelManager(kernel_name="python3")
        spec = manager.kernel_spec
        assert spec is not None
        spec.argv[0] = sys.executable  # this venv's Python
        await manager.start_kernel(cwd=home, env={"HOME": home, "PATH": "/usr/bin:/bin"})
        try:
            await run(manager, idle_n, seconds)
        finally:
            await manager.shutdown_kernel(now=True)


async def run(manager: AsyncKernelManager, idle_n: int, seconds: float) -> None:
    has_pandas = importlib.util.find_spec("pandas") is not None
    async with (
        KernelClient.from_manager(manager) as sub,
        KernelClient.from_manager(manager, use_subshells=False) as main_only,
    ):
        await run_python(sub, SETUP + ("\n" + FRAME if has_pandas else ""))
        listed = await list_variables(sub)
        print(
            f"kernel_tools: Python {platform.python_version()}, subshells "
            f"{'on' if sub.subshells_supported else 'off'}, {listed.data['total']} variables"
            f"{' (one a 1,000-row DataFrame)' if has_pandas else ''}, cells {seconds:g} s"
        )
        print("list_variables, idle kernel")
        report("subshell", await idle(sub, "subshell", idle_n))
        report("main shell", await idle(main_only, "main", idle_n))
        for name, cell in CELLS.items():
            print(f"list_variables while a {seconds:g} s cell runs ({name})")
            report("subshell", await during_cell_subshell(sub, seconds, cell))
            report(
                "main shell (fallback, queued behind the cell)",
                await during_cell_main(main_only, seconds, cell),
            )
        print("run_python round trip (agent_x = 1), idle kernel")
        trips = []
        for _ in range(idle_n):
            started = time.perf_counter()
            result = await run_python(sub, "agent_x = 1")
            assert result.status == "ok"
            trips.append(time.perf_counter() - started)
        report("main shell", trips)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s cells, 30 idle samples")
    parser.add_argument("--cell", type=float, default=10.0, help="seconds the long cell runs")
    options = parser.parse_args()
    asyncio.run(main(options.quick, options.cell))
