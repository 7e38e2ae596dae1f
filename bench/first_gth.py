"""The first ``%gth``: how long ``%load_ext gth_jupyter`` plus ``%gth hello`` take in a new kernel.

A person opens a notebook, runs ``%load_ext gth_jupyter`` and then ``%gth hello``, and waits for
the chat to appear. Each sample starts a fresh kernel (this venv's Python, ``ipykernel``) in an
empty temporary directory with an empty ``HOME`` (no configuration: the offline demo model),
waits until it is ready, and then times, from the client, the two cells one after the other:
from sending ``%load_ext gth_jupyter`` to the kernel going idle after ``w = %gth hello`` (the
widget object has been built and its comm opened). Kernel start-up is not counted; everything
our package imports and builds is. A last, untimed cell reports which of ``langchain``,
``langgraph`` and ``langchain_core`` the kernel has imported by then.

``--shell`` times the same two lines in a fresh interpreter on IPython's ``InteractiveShell``
instead of a kernel (no comm: anywidget builds the widget without a front end), a quicker and
less faithful figure.

Run from the repository root::

    .venv/bin/python bench/first_gth.py             # 5 kernels, median (~15 s)
    .venv/bin/python bench/first_gth.py --shell     # in-process IPython instead of a kernel
    .venv/bin/python bench/first_gth.py --check     # exit 1: median >= 1 s, or the agent loaded
    PYTHONPATH=/tmp/old .venv/bin/python bench/first_gth.py   # time another checkout
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 1.0
#: Modules the first %gth must not import: the agent stack loads where the agent runs.
HEAVY = ("langchain", "langgraph")
WATCHED = (*HEAVY, "langchain_core")
CELLS = ("%load_ext gth_jupyter", "w = %gth hello")
REPORT = (
    "import json, sys\n"
    f"print(json.dumps([m for m in {list(WATCHED)!r} if m in sys.modules]))\n"
    "print(json.dumps(type(w).__name__))"
)

SHELL_SAMPLE = f"""
import json, sys, time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
start = time.perf_counter()
for cell in {list(CELLS)!r}:
    result = shell.run_cell(cell)
    result.raise_error()
elapsed = time.perf_counter() - start
loaded = [m for m in {list(WATCHED)!r} if m in sys.modules]
widget = type(shell.user_ns["w"]).__name__
print(json.dumps({{"seconds": elapsed, "loaded": loaded, "widget": widget}}))
"""


def environment(home: Path) -> dict[str, str]:
    """An empty home and no inherited Python settings: what a fresh notebook user has."""
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    if os.environ.get("PYTHONPATH"):  # to time another checkout of the package
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def execute(client: Any, code: str, timeout: float = 120) -> tuple[dict[str, Any], str]:
    """Runs ``code`` as JupyterLab does, naming its cell (without a ``cellId`` the kernel takes
    the run for a headless one and answers in the cell); returns the execute reply's content and
    what the cell printed."""
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    request = client.session.msg("execute_request", content, metadata={"cellId": "bench-cell"})
    client.shell_channel.send(request)
    msg_id = request["header"]["msg_id"]
    printed = ""
    while True:
        message = client.get_iopub_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        if message["msg_type"] == "stream":
            printed += message["content"]["text"]
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            break
    reply: dict[str, Any] = client.get_shell_msg(timeout=timeout)["content"]
    if reply["status"] != "ok":
        raise RuntimeError(f"{code!r} failed: {reply.get('ename')}: {reply.get('evalue')}")
    return reply, printed


def kernel_sample() -> dict[str, Any]:
    """One fresh kernel: the two cells timed from the client, then the modules it loaded."""
    from jupyter_client.manager import KernelManager

    with tempfile.TemporaryDirectory(prefix="gth-first-") as tmp:
        manager = KernelManager(kernel_name="python3")
        manager.kernel_spec.argv[0] = sys.executable  # this venv's Python, with gth_jupyter
        # Quiet: the kernel's start-up warnings are not part of the figure.
        manager.start_kernel(cwd=tmp, env=environment(Path(tmp)), stderr=subprocess.DEVNULL)
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            start = time.perf_counter()
            for cell in CELLS:
                execute(client, cell)
            elapsed = time.perf_counter() - start
            _, printed = execute(client, REPORT)
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    loaded, widget = (json.loads(line) for line in printed.splitlines())
    return {"seconds": elapsed, "loaded": loaded, "widget": widget}


def shell_sample() -> dict[str, Any]:
    """One fresh interpreter running the two cells on IPython's InteractiveShell."""
    with tempfile.TemporaryDirectory(prefix="gth-first-") as tmp:
        done = subprocess.run(
            [sys.executable, "-c", SHELL_SAMPLE],
            cwd=tmp,
            env=environment(Path(tmp)),
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="fresh processes to time")
    parser.add_argument("--shell", action="store_true", help="InteractiveShell, not a kernel")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    args = parser.parse_args()

    sample = shell_sample if args.shell else kernel_sample
    way = "InteractiveShell" if args.shell else "kernel"
    print(f"first %gth ({way}): {' ; '.join(CELLS)}  [load {os.getloadavg()[0]:.2f}]")
    results = []
    for index in range(args.samples):
        result = sample()
        results.append(result)
        print(f"  sample {index + 1}: {result['seconds']:.3f} s  loaded: {result['loaded']}")
    median = statistics.median(r["seconds"] for r in results)
    heavy = sorted({m for r in results for m in r["loaded"] if m in HEAVY})
    print(f"median: {median:.3f} s (target < {TARGET_SECONDS:.1f} s)")
    print(f"langchain/langgraph imported: {heavy or 'none'}")
    if not all(r["widget"] == "GthChat" for r in results):
        print("FAIL: the cell did not return a GthChat")
        return 1
    failed = median >= TARGET_SECONDS or bool(heavy)
    if args.check and failed:
        print("FAIL: over the target" if median >= TARGET_SECONDS else "FAIL: the agent loaded")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
