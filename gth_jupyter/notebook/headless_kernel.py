"""The kernel side of a headless ``%gth`` turn, while its cell blocks the main thread.

A headless turn runs on the kernel's agent loop while the ``%gth`` cell waits for it on the
kernel's main thread. ``run_python`` must run on that main thread (plots, widgets and most
libraries expect it), so the waiting thread runs the agent's code itself (:class:`MainThread`):
through the shell as a cell would (:func:`execute_here`), its printed text, displays, value and
traceback captured into the tool's result instead of the cell's output. :class:`HeadlessKernel`
is what the kernel tools see: variables read in place, code handed to the waiting thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import queue
import sys
import time
import traceback
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HeadlessKernel", "MainThread", "execute_here"]


@dataclass
class _Job:
    code: str
    done: Future[dict[str, Any]] = field(default_factory=Future)


class MainThread:
    """Code the agent asks to run, handed to the main thread that waits for the turn.

    The agent's loop puts a job in; the waiting main thread (:meth:`wait`) takes it, runs it and
    sets its result. ``None`` in the queue wakes the main thread when the turn is over."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[_Job | None] = queue.Queue()

    async def run_python(self, code: str) -> dict[str, Any]:
        job = _Job(code)
        self._jobs.put(job)
        return await asyncio.wrap_future(job.done)

    def wait(self, turn: Future[Any], deadline: float) -> bool:
        """Runs jobs until ``turn`` is done (``True``) or ``deadline`` passes (``False``)."""
        turn.add_done_callback(lambda _f: self._jobs.put(None))
        while not turn.done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                job = self._jobs.get(timeout=left)
            except queue.Empty:
                return False
            # A job whose tool call was cancelled (the turn ran out of time) is not run; once
            # running, it can no longer be cancelled and gets its result.
            if job is None or not job.done.set_running_or_notify_cancel():
                continue
            try:
                result = execute_here(job.code)
            except BaseException as exc:  # the shell's own failure goes back to the tool
                job.done.set_exception(exc)
                if isinstance(exc, KeyboardInterrupt):
                    raise
                continue
            job.done.set_result(result)
        return True


@contextlib.contextmanager
def _captured(shell: Any) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Displays, the last expression's value and the traceback of code the shell runs, kept
    for the tool instead of reaching this cell's output (stdout and stderr are swapped too)."""
    from IPython.core.displayhook import CapturingDisplayHook
    from IPython.core.displaypub import CapturingDisplayPublisher

    outputs: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    publisher = CapturingDisplayPublisher()  # type: ignore[no-untyped-call]
    saved = (shell.display_pub, sys.displayhook, sys.stdout, sys.stderr)
    stdout, stderr = io.StringIO(), io.StringIO()
    own_traceback = "_showtraceback" in vars(shell)
    saved_traceback = vars(shell).get("_showtraceback")

    def keep_traceback(etype: Any, evalue: Any, stb: Sequence[str]) -> None:
        outputs.append(
            {
                "msg_type": "error",
                "content": {"ename": etype.__name__, "evalue": str(evalue), "traceback": stb},
            }
        )

    shell.display_pub = publisher
    sys.displayhook = CapturingDisplayHook(shell=shell, outputs=results)  # type: ignore[no-untyped-call]
    sys.stdout, sys.stderr = stdout, stderr
    shell._showtraceback = keep_traceback
    try:
        yield outputs, results
    finally:
        shell.display_pub, sys.displayhook, sys.stdout, sys.stderr = saved
        if own_traceback:
            shell._showtraceback = saved_traceback
        else:
            del shell._showtraceback
        # In output order as far as it is known: printed text, then displays, then the value.
        streams = [("stdout", stdout.getvalue()), ("stderr", stderr.getvalue())]
        shown = [
            {"msg_type": "display_data", "content": {"data": o["data"]}}
            for o in publisher.outputs
            if not o.get("update")
        ]
        printed = [
            {"msg_type": "stream", "content": {"name": name, "text": text}}
            for name, text in streams
            if text
        ]
        values = [{"msg_type": "execute_result", "content": {"data": r["data"]}} for r in results]
        errors = [o for o in outputs if o["msg_type"] == "error"]
        outputs[:] = [*printed, *shown, *values, *errors]


def execute_here(code: str) -> dict[str, Any]:
    """Runs ``code`` through this kernel's shell on the calling (main) thread, as a cell would
    (matplotlib's inline figures are shown at its end), without entering the history, and
    answers as ``run_python`` does."""
    from ..kernel.access import error, run_answer
    from ..kernel.client import Execution
    from ..kernel.execute import shape

    shell = _shell()
    if shell is None:
        return error("no_kernel", "this process is not an IPython kernel")
    started = time.monotonic()
    with _captured(shell) as (outputs, _results):
        result = shell.run_cell(code, store_history=False, silent=False)
    execution = Execution(msg_id="headless", shell="main", outputs=outputs, started=True)
    failure = result.error_in_exec or result.error_before_exec
    if failure is not None and not any(o["msg_type"] == "error" for o in outputs):
        execution.outputs.append(
            {
                "msg_type": "error",
                "content": {
                    "ename": type(failure).__name__,
                    "evalue": str(failure),
                    "traceback": traceback.format_exception(failure),
                },
            }
        )
    execution.reply = {"status": "error" if failure is not None else "ok"}
    execution.completed = True
    execution.elapsed = time.monotonic() - started
    return run_answer(shape(execution))


def _shell() -> Any:
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _namespace() -> dict[str, Any]:
    shell = _shell()
    return shell.user_ns if shell is not None else {}


class HeadlessKernel:
    """The kernel tools' way into this kernel during a headless turn: variables are read in
    place (as the in-kernel agent reads them), code goes to the waiting main thread."""

    def __init__(self, main: MainThread) -> None:
        from ..kernel import InKernelAccess

        async def no_client() -> Any:
            from ..kernel import KernelClientError

            raise KernelClientError("headless: code runs on the main thread", code="no_kernel")

        self._inspect = InKernelAccess(_namespace, no_client)
        self._main = main

    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]:
        return await self._inspect.list_variables(offset, limit)

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]:
        return await self._inspect.describe_variable(name, data_context)

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]:
        # The main thread cannot be interrupted from here; the turn's own timeout bounds it.
        return await self._main.run_python(code)
