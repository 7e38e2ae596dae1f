"""The kernel side of a headless ``%gth`` turn, while its cell blocks the main thread.

A headless turn runs on the kernel's agent loop while the ``%gth`` cell waits for it on the
kernel's main thread. ``run_python`` must run on that main thread (plots, widgets and most
libraries expect it), so the waiting thread runs the agent's code itself (:class:`MainThread`):
through the shell as a cell would (:func:`execute_here`), its printed text, displays, value and
traceback captured into the tool's result instead of the cell's output. :class:`HeadlessKernel`
is what the kernel tools see: variables read in place, code handed to the waiting thread.

Time limits. The agent's code runs on the very thread that waits, so nothing else can end the
cell while it runs: a watchdog thread interrupts it, as a kernel interrupt would (``SIGINT``
sent to the main thread, which breaks ``time.sleep`` and pure-Python loops alike), when
``run_python``'s ``timeout`` passes or the turn ends (its ``headlessTimeoutSeconds`` passed, or
it failed), and again each second while the code goes on. Code inside a C call that holds the
interpreter lock cannot be interrupted: it is interrupted as soon as the call returns, and the
result and the cell say how late that was. Our own ``SIGINT`` handler, installed while the
cell waits, tells those interrupts from a person's, which act as they did before. A cell run
off the main thread (a subshell) gets the interrupt as an exception raised in that thread
instead, which breaks pure-Python loops and short sleeps but not a long blocking call.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import io
import queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...kernel.client import Execution

__all__ = ["CodeInterrupted", "HeadlessKernel", "MainThread", "execute_here"]

#: While the code goes on after an interrupt (it caught it), it is interrupted again this often.
RESEND_S = 1.0
#: Code that ends this much past its time limit could not be interrupted (a C call).
LATE_S = 1.0
#: How long the cell waits, at its end, for an interrupt already sent to arrive.
SETTLE_S = 2.0


class CodeInterrupted(KeyboardInterrupt):
    """Raised in the agent's code when its time is up (a ``KeyboardInterrupt``, as a kernel
    interrupt raises, so the code's own ``except Exception`` does not swallow it)."""


@dataclass
class _Job:
    code: str
    timeout: float | None = None
    done: Future[dict[str, Any]] = field(default_factory=Future)


@dataclass
class _Run:
    """The job the main thread is running, as the watchdog and the SIGINT handler see it."""

    job: _Job
    started: float
    due: float
    """When its time is up: ``run_python``'s timeout or the turn's deadline, the earlier."""
    why: str = ""
    """``"timeout"`` or ``"turn"`` once it was told to stop."""
    interrupts: int = 0
    sent_at: float = 0.0
    """When the first interrupt was sent (late when the code held the interpreter lock)."""
    in_code: bool = False
    ended: float = 0.0
    finished: threading.Event = field(default_factory=threading.Event)


class MainThread:
    """Code the agent asks to run, handed to the main thread that waits for the turn.

    The agent's loop puts a job in; the waiting main thread (:meth:`wait`) takes it, runs it and
    sets its result. ``None`` in the queue wakes the main thread when the turn is over. While a
    job runs, a watchdog thread interrupts it when its time is up (see the module's notes)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self._current: _Run | None = None
        self._deadline: float | None = None
        self._ident = threading.get_ident()
        self._signals = False
        self._previous: Any = None
        self._sent = 0  # SIGINTs sent by the watchdog / seen by our handler
        self._seen = 0
        self.notes: list[str] = []
        """What the cell should say about the code it ran (an interrupt at the turn's end, a
        call that could not be interrupted)."""

    async def run_python(self, code: str, timeout: float | None = None) -> dict[str, Any]:
        job = _Job(code, timeout)
        self._jobs.put(job)
        return await asyncio.wrap_future(job.done)

    def turn_ends_at(self, deadline: float) -> None:
        """The turn's own deadline (``time.monotonic()``): code still running then is
        interrupted. Called from the agent's loop as the turn starts."""
        self._deadline = deadline

    def wait(self, turn: Future[Any], deadline: float) -> bool:
        """Runs jobs until ``turn`` is done (``True``) or ``deadline`` passes (``False``)."""
        self._ident = threading.get_ident()
        turn.add_done_callback(self._turn_over)
        with self._interrupts():
            while not turn.done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                try:
                    job = self._jobs.get(timeout=left)
                except queue.Empty:
                    return False
                # A job whose tool call was cancelled (the turn ran out of time) is not run;
                # once running, it can no longer be cancelled and gets its result.
                if job is None or not job.done.set_running_or_notify_cancel():
                    continue
                self._run(job, deadline)
        return True

    def _turn_over(self, _turn: Future[Any]) -> None:
        self._jobs.put(None)
        run = self._current
        if run is not None:  # nobody waits for its result any more
            self._interrupt(run, "turn")

    # -- one job -------------------------------------------------------------------------------

    def _run(self, job: _Job, deadline: float) -> None:
        if _shell() is None:
            from ...kernel.access import error

            job.done.set_result(error("no_kernel", "this process is not an IPython kernel"))
            return
        _warm_tracebacks()  # before the window opens: no interrupt can land in it
        started = time.monotonic()
        limits = [deadline]
        if job.timeout is not None:
            limits.append(started + job.timeout)
        if self._deadline is not None:
            limits.append(self._deadline)
        run = _Run(job, started, min(limits))
        with self._lock:
            self._current = run
        threading.Thread(
            target=self._watch, args=(run,), daemon=True, name="gth-run-python-watchdog"
        ).start()
        execution: Execution | None = None
        failure: BaseException | None = None
        try:
            execution = _execute(job.code, self._window(run))
        except CodeInterrupted:  # interrupted in the shell's own steps: nothing was kept
            pass
        except BaseException as exc:  # the shell's own failure goes back to the tool
            failure = exc
        finally:
            with self._lock:
                run.ended = time.monotonic()
                self._current = None
            run.finished.set()
        if failure is not None:
            job.done.set_exception(failure)
            if isinstance(failure, KeyboardInterrupt):
                raise failure
            return
        job.done.set_result(self._answer(run, execution))

    def _watch(self, run: _Run) -> None:
        """Interrupts ``run`` when its time is up, then each second while it goes on."""
        wait = run.due - time.monotonic()
        while not run.finished.wait(max(wait, 0.0)):
            self._interrupt(run, _due_reason(run))
            wait = RESEND_S

    def _interrupt(self, run: _Run, why: str) -> None:
        with self._lock:
            if self._current is not run or run.ended:
                return
            run.why = run.why or why
            # Only inside the code itself, and one interrupt at a time, so none lands in the
            # cell's own steps or is taken for the user's.
            if not run.in_code or self._sent != self._seen:
                return
            run.interrupts += 1
            run.sent_at = run.sent_at or time.monotonic()
            if self._signals:
                self._sent += 1
                signal.pthread_kill(self._ident, signal.SIGINT)
            else:  # the cell runs off the main thread (a subshell): no signal reaches it
                _async_raise(self._ident, CodeInterrupted)

    @contextlib.contextmanager
    def _window(self, run: _Run) -> Iterator[None]:
        """The span in which ``run``'s code runs: interrupts land only here."""
        with self._lock:
            run.in_code = True
        try:
            yield
        finally:
            while True:  # an interrupt landing on the way out is absorbed (the code is over)
                try:
                    with self._lock:
                        run.in_code = False
                        if not self._signals:
                            _async_raise(self._ident, None)  # one still pending is dropped
                    break
                except CodeInterrupted:
                    continue

    @contextlib.contextmanager
    def _interrupts(self) -> Iterator[None]:
        """Our SIGINT handler while the cell waits (only the main thread can set one)."""
        self._signals = threading.current_thread() is threading.main_thread()
        if not self._signals:
            yield
            return
        self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            yield
        finally:
            # An interrupt still on its way must reach our handler, not the cell's.
            settle = time.monotonic() + SETTLE_S
            while self._seen != self._sent and time.monotonic() < settle:
                time.sleep(0.01)
            signal.signal(signal.SIGINT, self._previous)

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self._seen != self._sent:  # the watchdog's
            self._seen += 1
            run = self._current
            if run is not None and run.in_code:
                raise CodeInterrupted(_stopped(run))
            return  # the code was over when it arrived
        previous = self._previous
        if callable(previous):  # a person's interrupt: handled as it was before ours
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    def _answer(self, run: _Run, execution: Execution | None) -> dict[str, Any]:
        from ...kernel.access import run_answer
        from ...kernel.client import Execution
        from ...kernel.execute import shape

        if execution is None:
            execution = Execution(msg_id="headless", shell="main", started=True, completed=True)
            execution.reply = {"status": "error"}
            execution.outputs.append(_error_output(CodeInterrupted(_stopped(run))))
            execution.elapsed = run.ended - run.started
        late = run.ended - run.due
        if not run.why and late <= LATE_S:  # it ended on its own, within its time
            return run_answer(shape(execution))
        execution.timed_out = True
        execution.interrupted = run.interrupts > 0
        said = f"{_stopped(run)}; the kernel was interrupted"
        held = not run.interrupts or run.sent_at - run.due > LATE_S
        if late > LATE_S and held:  # nothing could run until the call returned
            said = (
                f"{_stopped(run)}; it could not be interrupted until it returned, {late:.1f} s "
                "later (a call that holds the interpreter lock)"
            )
            self.notes.append(
                "run_python's code could not be interrupted when its time was up (a call that "
                f"holds the interpreter lock): it ran on until it returned, {late:.1f} s late."
            )
        elif late > LATE_S:
            said += f", and went on (it caught the interrupt) for {late:.1f} s more"
            self.notes.append(
                "run_python's code caught the interrupt when its time was up and went on: it "
                f"ended {late:.1f} s late."
            )
        elif (run.why or _due_reason(run)) == "turn":
            self.notes.append(
                "run_python's code was still running when the turn ended, after "
                f"{run.ended - run.started:.1f} s: it was interrupted."
            )
        execution.note = "; ".join(n for n in (said, execution.note) if n)
        return run_answer(shape(execution))


def _due_reason(run: _Run) -> str:
    """Why ``run``'s time is up at ``run.due``: its own ``timeout`` or the turn's end."""
    timeout = run.job.timeout
    return "timeout" if timeout is not None and run.started + timeout <= run.due else "turn"


def _stopped(run: _Run) -> str:
    """Why the code was stopped, as the tool result says it (the live kernel's words for a
    timeout)."""
    if (run.why or _due_reason(run)) == "timeout":
        return f"timed out after {run.job.timeout:g} s"
    return "the turn ended (jupyter.headlessTimeoutSeconds ran out, or it failed) while it ran"


def _async_raise(ident: int, exc: type[BaseException] | None) -> None:
    """Raises ``exc`` in thread ``ident`` at its next bytecode (``None``: drops a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), ctypes.py_object(exc) if exc is not None else None
    )


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
    from ...kernel.access import error, run_answer
    from ...kernel.execute import shape

    execution = _execute(code, contextlib.nullcontext())
    if execution is None:
        return error("no_kernel", "this process is not an IPython kernel")
    return run_answer(shape(execution))


def _execute(code: str, window: contextlib.AbstractContextManager[Any]) -> Execution | None:
    """``code`` run through the shell, its outputs captured (``None`` outside IPython);
    ``window`` spans the shell's run of the code, where an interrupt may land."""
    from ...kernel.client import Execution

    shell = _shell()
    if shell is None:
        return None
    started = time.monotonic()
    failure: BaseException | None = None
    with _captured(shell) as (outputs, _results):
        try:
            with window:
                result = shell.run_cell(code, store_history=False, silent=False)
            failure = result.error_in_exec or result.error_before_exec
        except CodeInterrupted as exc:  # landed in the shell's own steps around the code
            failure = exc
    execution = Execution(msg_id="headless", shell="main", outputs=outputs, started=True)
    if failure is not None and not any(o["msg_type"] == "error" for o in outputs):
        execution.outputs.append(_error_output(failure))
    execution.reply = {"status": "error" if failure is not None else "ok"}
    execution.completed = True
    execution.elapsed = time.monotonic() - started
    return execution


def _error_output(failure: BaseException) -> dict[str, Any]:
    return {
        "msg_type": "error",
        "content": {
            "ename": type(failure).__name__,
            "evalue": str(failure),
            "traceback": traceback.format_exception(failure),
        },
    }


_warmed = False


def _warm_tracebacks() -> None:
    """Formats one traceback the way the shell does, once per kernel, so that everything it
    imports on first use (``stack_data``, ``pygments``' lexers…) is imported outside the code's
    window. In it, the code's first traceback could take longer than ``RESEND_S`` on a busy
    machine: the next interrupt then landed in the middle of ``import stack_data`` and left it
    half-imported, and every traceback after (the cell's own error at the turn's deadline too)
    failed to format ("module 'stack_data' has no attribute 'core'")."""
    global _warmed
    shell = _shell()
    if _warmed or shell is None:
        return
    _warmed = True
    try:
        raise ValueError("gth: warming the traceback formatter")
    except ValueError:
        kind, value, tb = sys.exc_info()
        with contextlib.suppress(Exception):
            shell.InteractiveTB.structured_traceback(kind, value, tb)


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
        from ...kernel.access import InKernelAccess

        async def no_client() -> Any:
            from ...kernel.router import KernelClientError

            raise KernelClientError("headless: code runs on the main thread", code="no_kernel")

        self._inspect = InKernelAccess(_namespace, no_client)
        self._main = main

    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]:
        return await self._inspect.list_variables(offset, limit)

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]:
        return await self._inspect.describe_variable(name, data_context)

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]:
        return await self._main.run_python(code, timeout)

    def turn_ends_at(self, deadline: float) -> None:
        """See :meth:`MainThread.turn_ends_at`."""
        self._main.turn_ends_at(deadline)
