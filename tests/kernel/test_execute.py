"""run_python: output, last value, errors, images, caps and a timeout that interrupts."""

from __future__ import annotations

import asyncio
import base64

import pytest
from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.contract.text import cap, strip_ansi
from gth_jupyter.kernel import KernelClient, run_python


async def test_stdout_stderr_and_the_last_value(kernel: KernelClient) -> None:
    result = await run_python(
        kernel, "import sys\nprint('out')\nprint('err', file=sys.stderr)\n6 * 7"
    )
    assert result.status == "ok"
    assert (result.stdout, result.stderr, result.result) == ("out\n", "err\n", "42")
    assert result.images == [] and result.error is None


async def test_an_error_comes_back_with_a_plain_traceback(kernel: KernelClient) -> None:
    result = await run_python(kernel, "def agent_f():\n    return 1 / 0\nagent_f()")
    assert result.status == "error" and result.error is not None
    assert result.error["ename"] == "ZeroDivisionError"
    assert "\x1b" not in result.error["traceback"]
    assert "agent_f" in result.error["traceback"]
    assert (await run_python(kernel, "2 + 2")).result == "4"


async def test_long_output_keeps_head_and_tail(kernel: KernelClient) -> None:
    code = "print('HEAD' + 'x' * 50000 + 'TAIL')"
    result = await run_python(kernel, code, max_text=1000)
    assert result.stdout.startswith("HEAD") and result.stdout.rstrip().endswith("TAIL")
    assert len(result.stdout) < 1100 and "characters cut" in result.stdout


async def test_a_matplotlib_figure_comes_back_as_a_png(kernel: KernelClient) -> None:
    pytest.importorskip("matplotlib")
    code = (
        "%matplotlib inline\n"
        "import matplotlib.pyplot as agent_plt\n"
        "agent_plt.plot([1, 2, 3], [3, 1, 2])\n"
        "agent_plt.show()"
    )
    result = await run_python(kernel, code)
    assert result.status == "ok", result.error
    assert len(result.images) == 1 and result.images[0].mime_type == "image/png"
    assert base64.b64decode(result.images[0].data).startswith(b"\x89PNG")
    assert all("iVBOR" not in text for text in [result.stdout, *result.displays])


async def test_a_figure_left_as_the_last_value_comes_back_once(kernel: KernelClient) -> None:
    pytest.importorskip("matplotlib")
    code = (  # notebook style: the figure is the cell's value, and inline also displays it
        "%matplotlib inline\n"
        "import matplotlib.pyplot as agent_plt\n"
        "agent_fig, agent_ax = agent_plt.subplots()\n"
        "agent_ax.plot([1, 2, 3], [3, 1, 2])\n"
        "agent_fig"
    )
    execution = await kernel.execute(code, shell="main")
    pngs = [o["content"]["data"]["image/png"] for o in execution.outputs if "data" in o["content"]]
    assert len(pngs) == 2 and pngs[0] == pngs[1]  # the kernel sends the same bytes twice
    result = await run_python(kernel, code)
    assert result.status == "ok", result.error
    (image,) = result.images
    assert base64.b64decode(image.data).startswith(b"\x89PNG")
    assert result.result is not None and result.result.startswith("<Figure")

    two = (  # two figures, each shown twice: two images
        "agent_f1, agent_a1 = agent_plt.subplots()\nagent_a1.plot([1, 2], [2, 1])\n"
        "display(agent_f1)\nagent_f2, agent_a2 = agent_plt.subplots()\nagent_f2"
    )
    assert len((await run_python(kernel, two)).images) == 2


async def test_a_timeout_interrupts_the_kernel_and_leaves_it_usable(
    kernel: KernelClient,
) -> None:
    result = await run_python(kernel, "import time\ntime.sleep(30)", timeout=1.0)
    assert result.status == "timeout" and result.timed_out and result.interrupted
    assert "interrupted" in result.note
    assert result.error is not None and result.error["ename"] == "KeyboardInterrupt"
    assert result.elapsed < 8
    assert (await run_python(kernel, "'still here'")).result == "'still here'"


def test_cap_and_strip_ansi() -> None:
    assert cap("abc", 10) == "abc"
    capped = cap("a" * 50 + "b" * 50, 20)
    assert capped.startswith("a" * 10) and capped.endswith("b" * 10) and "80 characters" in capped
    assert strip_ansi("\x1b[0;31mError\x1b[0m") == "Error"


async def test_code_queued_behind_a_users_cell_times_out_without_interrupting_it(
    manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    async with KernelClient.from_manager(manager) as notebook:
        users_cell = asyncio.create_task(run_python(notebook, "import time; time.sleep(2); 'mine'"))
        await asyncio.sleep(0.3)
        result = await run_python(kernel, "agent_late = 1", timeout=0.5, queue_timeout=0.5)
        assert result.status == "timeout" and not result.interrupted
        assert "queued" in result.note
        assert (await users_cell).result == "'mine'"


async def test_code_waits_behind_a_users_cell_as_a_cell_would_and_its_timeout_starts_later(
    manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    async with KernelClient.from_manager(manager) as notebook:
        users_cell = asyncio.create_task(run_python(notebook, "import time; time.sleep(2); 'mine'"))
        await asyncio.sleep(0.3)
        # Its own 1 s starts when the kernel starts it, after the user's 2 s cell.
        result = await run_python(kernel, "'agent ran'", timeout=1.0)
        assert result.status == "ok" and result.result == "'agent ran'"
        assert result.elapsed > 1.5
        assert (await users_cell).result == "'mine'"
