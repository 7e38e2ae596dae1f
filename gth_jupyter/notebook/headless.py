"""A ``%gth`` turn run in the kernel itself, for notebooks no front end renders.

``jupyter nbconvert --execute``, papermill, nbclient and scheduled jobs run a notebook with no
page to show a chat widget (see ``front_end.is_headless``). There a ``%gth`` cell runs its turn
in the kernel with the kernel's agent (the configuration and ``notebook`` command the server
uses, the kernel's SQLite store), blocks until the turn ends, and leaves the static copy of the
turn (``static_copy.render_static_copy``) as its only output: no widget, so no widget state for
nbconvert's HTML to show instead of the answer.

What only a person or a browser could do is answered at once so a run never hangs:

- a browser tool (``capture_image``, ``ask_user``, ``browser_context``, a ``client_tool``) is
  declared as a widget would declare it, and a call gets an error result the model reads ("no
  browser is attached to this notebook run…");
- an approval that would ask a person (per the approvals mode and rules) is rejected; the output
  says so and how to allow it.

Both are resumed the way a client answers (``resume[]`` entries through ``plan_run``), on the
turn's own run loop. ``run_python`` must run on the kernel's main thread, which this cell holds
while it waits; so the waiting main thread runs the agent's code itself (:class:`MainThread`),
through the shell as a cell would, its displays and plots captured into the tool's result.

A headless run talks on a thread of its own (one per kernel, ``headless-…``; ``--thread``
chooses another): a kernel started by nbclient or papermill has no notebook identity to share a
thread with a server.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import queue
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import ag_ui.core as agui

from ..contract.names import DEFAULT_AGENT
from ..contract.pending import PendingInterrupt
from ..contract.run import RunEnd
from . import client_tools
from .kernel_access import main_thread_waiting

__all__ = [
    "BROWSER_TOOLS",
    "DEFAULT_TIMEOUT_S",
    "HeadlessOutcome",
    "headless_thread_id",
    "new_headless_thread",
    "run_headless",
]

#: ``jupyter.headlessTimeoutSeconds`` when the configuration does not say.
DEFAULT_TIMEOUT_S = 600.0
#: Answers given for one turn before it is stopped (a model that keeps calling browser tools).
MAX_ROUNDS = 12
NO_BROWSER = (
    "no browser is attached to this notebook run (it runs headless: nbconvert --execute, "
    "papermill, nbclient or GTH_JUPYTER_HEADLESS=1), so the browser tool {name} cannot run. "
    "Tell the user; it works when the notebook runs in JupyterLab, Notebook 7 or VS Code."
)
NO_PERSON = (
    "nobody can approve tool calls in a headless notebook run, so this call was refused "
    "without asking"
)

#: The browser tools a chat widget declares itself (their specs live in ``js/src/tools/``);
#: declared here the same way, so the model sees the same tools with or without a browser.
BROWSER_TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "capture_image",
        "description": "Take a photo with the user's webcam and return it as a JPEG image. The "
        "browser asks the user for camera permission; the camera is switched off right after "
        "the photo.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
    {
        "name": "ask_user",
        "description": "Ask the user a question in the chat and wait for the answer. Give "
        "`choices` for a multiple-choice question (shown as buttons); leave it out for a "
        "free-text answer.",
        "parameters": {
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to show."},
                "choices": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Optional answers to pick from.",
                },
            },
            "required": ["question"],
        },
    },
    {
        "name": "browser_context",
        "description": "Read the user's browser settings: locale, time zone, viewport size and "
        "light/dark colour scheme. Use it before formatting dates, numbers or layouts for this "
        "user.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
)

_thread_lock = threading.Lock()
_thread: str | None = None


def headless_thread_id() -> str:
    """The thread this kernel's headless turns share (made on first use)."""
    global _thread
    with _thread_lock:
        if _thread is None:
            _thread = f"headless-{uuid.uuid4().hex[:12]}"
        return _thread


def new_headless_thread() -> str:
    """Starts a fresh headless thread for the turns from here on (``%gth --new``)."""
    global _thread
    with _thread_lock:
        _thread = f"headless-{uuid.uuid4().hex[:12]}"
        return _thread


def declared_tools() -> list[agui.Tool]:
    """What a widget with no notebook front end declares: the built-in browser tools and the
    ``client_tool``s registered in this kernel (a registered one replaces a built-in)."""
    specs = {spec["name"]: spec for spec in BROWSER_TOOLS}
    for spec in client_tools.registered_tools():
        specs[spec["name"]] = spec
    return [
        agui.Tool(
            name=spec["name"],
            description=str(spec.get("description") or ""),
            parameters=spec.get("parameters") or {"type": "object", "properties": {}},
        )
        for spec in specs.values()
    ]


# -- run_python on the waiting main thread ------------------------------------------------------


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


# -- the turn ----------------------------------------------------------------------------------


@dataclass
class HeadlessOutcome:
    """What a headless turn left: the thread's view of it and the notes the output adds."""

    view: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    error: str | None = None


def allow_hint(value: Mapping[str, Any]) -> str:
    """How to let a refused call run next time, in the configuration's own words."""
    name = str(value.get("toolName") or "the tool")
    command = value.get("command")
    if isinstance(command, str) and command and "code" not in value:
        entry = {"type": "shell", "matcher": "exact", "pattern": command}
    else:
        entry = {"type": "tool", "matcher": "exact", "pattern": name}
    return (
        f"To let `{name}` run in a headless run, add `{json.dumps(entry)}` to `approvals.allow` "
        'in `.gsloth.config.json` (or set the approvals mode to `"bypass"`).'
    )


def answer_pending(pending: Sequence[PendingInterrupt]) -> tuple[list[agui.ResumeEntry], list[str]]:
    """The answers nobody could give in person: an error for each browser tool, a rejection for
    each approval; and the note each leaves in the output."""
    entries: list[agui.ResumeEntry] = []
    notes: list[str] = []
    for item in pending:
        value = item.value if isinstance(item.value, Mapping) else {}
        if item.client_tool:
            name = item.tool_name or "a browser tool"
            payload: Any = json.dumps({"error": NO_BROWSER.format(name=name)})
            notes.append(
                f"`{name}` runs in the browser, and no browser is attached to this notebook run, "
                "so the call got an error. Run the cell in JupyterLab, Notebook 7 or VS Code to "
                "use it."
            )
        elif item.kind == "approval":
            payload = {"approved": False, "message": NO_PERSON}
            why = _reason(str(value.get("message") or ""), item.tool_name or "")
            said = f" ({why})" if why else ""
            notes.append(
                f"Refused without asking: `{item.tool_name or 'a tool'}` needs approval{said}, "
                f"and nobody can approve in a headless run. {allow_hint(value)}"
            )
        else:
            payload = None
            notes.append("An interrupt nobody can answer in a headless run was cancelled.")
        if payload is None:
            entries.append(agui.ResumeEntry(interrupt_id=item.id, status="cancelled"))
        else:
            entries.append(
                agui.ResumeEntry(interrupt_id=item.id, status="resolved", payload=payload)
            )
    return entries, notes


def _reason(message: str, name: str) -> str:
    """Why the gate asked, without the "The agent wants to …" the approval card leads with."""
    for marker in (f"({name}): ", f"call {name}: "):
        if marker in message:
            message = message.split(marker, 1)[1]
            break
    return message.strip().rstrip(".")


async def run_turn(
    prompt: str,
    *,
    thread: str,
    agent: str,
    kernel: HeadlessKernel,
    timeout: float,
) -> HeadlessOutcome:
    """Runs one turn to its end on ``thread`` with the kernel's agent, answering whatever it
    stops on, for at most ``timeout`` seconds; returns the turn's view (what it produced so far
    when it failed or ran out of time). The same planning as every host (``plan_run``)."""
    from ..agui import runtime_of, thread_view
    from .kernel_agent import kernel_registry

    runtime = await runtime_of(kernel_registry(), agent)
    turn = f"turn-{uuid.uuid4().hex}"
    notes: list[str] = []
    error: str | None = None
    try:
        await asyncio.wait_for(
            _rounds(runtime, prompt, thread, turn, kernel, notes, timeout), timeout
        )
    except (asyncio.TimeoutError, TimeoutError):
        error = f"no answer within {timeout:g} s (jupyter.headlessTimeoutSeconds)"
    except Exception as exc:
        error = _failure(exc)
    view = await thread_view(runtime, thread, turn)
    return HeadlessOutcome(view, notes, error)


async def _rounds(
    runtime: Any,
    prompt: str,
    thread: str,
    turn: str,
    kernel: HeadlessKernel,
    notes: list[str],
    wait: float,
) -> None:
    """The turn's runs: the prompt, then one run per round of answers, until nothing waits."""
    from ..agui import ProtocolError, plan_run

    tools = declared_tools()
    props = {"gth": {"turnId": turn}}
    messages: list[Any] = [agui.UserMessage(id=f"headless-msg-{uuid.uuid4().hex}", content=prompt)]
    entries: list[agui.ResumeEntry] | None = None
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _round in range(MAX_ROUNDS):
        request = agui.RunAgentInput(
            thread_id=thread,
            run_id=f"headless-run-{uuid.uuid4().hex[:12]}",
            messages=messages,
            tools=tools,
            context=[],
            state=None,
            forwarded_props=props,
            resume=entries,
        )
        while True:  # a run of another client on this thread: wait it out, as a session does
            try:
                prepared = await plan_run(runtime, request, kernel=kernel)
                break
            except ProtocolError as refusal:
                if refusal.code != "run_busy" or loop.time() - start >= wait:
                    raise
            await asyncio.sleep(0.25)
        pending: list[PendingInterrupt] = []
        try:
            async for item in runtime.stream(prepared.decision.plan):
                if isinstance(item, RunEnd):
                    pending = item.pending
        finally:
            prepared.claim.release()
        if not pending:
            return
        entries, said = answer_pending(pending)
        notes += [n for n in said if n not in notes]
        messages = []
    raise RuntimeError(f"the turn was stopped after {MAX_ROUNDS} rounds of answers")


# -- the cell ----------------------------------------------------------------------------------


def _jupyter_settings() -> tuple[float, bool]:
    """``jupyter.headlessTimeoutSeconds`` and ``jupyter.savePhotos`` from the kernel's
    configuration (defaults where it does not say, or cannot be read)."""
    from .kernel_agent import kernel_registry

    try:
        jupyter = getattr(kernel_registry().config, "jupyter", None)
    except Exception:  # a configuration that fails to load fails the run itself, with its error
        jupyter = None
    timeout = getattr(jupyter, "headless_timeout_seconds", None) or DEFAULT_TIMEOUT_S
    return float(timeout), bool(getattr(jupyter, "save_photos", False))


def render(
    view: Mapping[str, Any], *, prompt: str, save_photos: bool, notes: Sequence[str]
) -> dict[str, str]:
    """The turn's static copy (``static_copy.render_static_copy``)."""
    from .static_copy import render_static_copy

    return render_static_copy(view, prompt=prompt, save_photos=save_photos, notes=list(notes))


def run_headless(
    prompt: str,
    *,
    thread: str | None = None,
    agent: str = DEFAULT_AGENT,
    display: Callable[[dict[str, str]], None] | None = None,
) -> HeadlessOutcome:
    """Runs ``prompt`` as a turn in this kernel, blocking until it ends (at most the configured
    ``headlessTimeoutSeconds``), and displays its static copy. A run that fails or times out
    still shows what it produced, then raises, so a scheduled run reports it."""
    from .kernel_agent import kernel_loop

    timeout, save_photos = _jupyter_settings()
    main = MainThread()
    work = run_turn(
        prompt,
        thread=thread or headless_thread_id(),
        agent=agent,
        kernel=HeadlessKernel(main),
        timeout=timeout,
    )
    turn = kernel_loop().submit(work)
    try:
        with main_thread_waiting():
            main.wait(turn, time.monotonic() + timeout + 5)
    except BaseException:
        turn.cancel()  # Ctrl-C (a kernel interrupt): the turn stops with the cell
        raise
    try:
        outcome = turn.result(timeout=10)
    except Exception as exc:  # the agent could not be built, or the turn never let go
        turn.cancel()
        outcome = HeadlessOutcome({"messages": []}, error=_failure(exc))
    notes = list(outcome.notes)
    if outcome.error:
        notes.append(f"The turn did not finish: {outcome.error}.")
    bundle = render(outcome.view, prompt=prompt, save_photos=save_photos, notes=notes)
    (display or _display)(bundle)
    if outcome.error:
        raise RuntimeError(f"%gth: the turn did not finish: {outcome.error}")
    return outcome


def _failure(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    text = str(exc) or type(exc).__name__
    return f"{text} ({code})" if isinstance(code, str) and code else text


def _display(bundle: dict[str, str]) -> None:
    from IPython.display import display

    display(bundle, raw=True)  # type: ignore[no-untyped-call]
