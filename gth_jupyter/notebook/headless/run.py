"""A ``%gth`` turn run in the kernel itself, for notebooks no front end renders.

``jupyter nbconvert --execute``, papermill, nbclient and scheduled jobs run a notebook with no
page to show a chat widget (see ``entry/front_end.is_headless``). There a ``%gth`` cell runs its
turn in the kernel with the kernel's agent (the configuration and ``notebook`` command the
server uses, the kernel's SQLite store), blocks until the turn ends, and leaves the static copy
of the turn (``copy.render_static_copy``) as its only output: no widget, so no widget state for
nbconvert's HTML to show instead of the answer.

This module runs the turn and shows it; the parts it stands on each have their own module:

- ``_tools``: the browser tools declared as a widget would declare them;
- ``_answers``: what only a browser or a person could answer is answered at once so a
  run never hangs (a browser tool gets an error result, an approval that would ask is refused
  with how to allow it), resumed the way a client answers (``resume[]`` entries, each round
  a run started as every host starts one: ``RunService.start``) on the turn's own run loop;
- ``_kernel``: ``run_python`` must run on the kernel's main thread, which this cell
  holds while it waits; so the waiting main thread runs the agent's code itself, through the
  shell as a cell would, its displays and plots captured into the tool's result.

A headless run talks on a thread of its own (one per kernel, ``headless-…``; ``--thread``
chooses another): a kernel started by nbclient or papermill has no notebook identity to share a
thread with a server.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ag_ui.core as agui

from ...contract.names import DEFAULT_AGENT
from ...contract.pending import PendingInterrupt
from ...contract.run import RunEnd
from ..host import kernel_host
from ..host.kernel_access import main_thread_waiting
from ._answers import answer_pending
from ._kernel import HeadlessKernel, MainThread
from ._tools import declared_tools

# What the package offers is named by its face (``__init__.py``).

#: ``jupyter.headlessTimeoutSeconds`` when the configuration does not say.
DEFAULT_TIMEOUT_S = 600.0
#: Answers given for one turn before it is stopped (a model that keeps calling browser tools).
MAX_ROUNDS = 12


def headless_thread_id() -> str:
    """The thread this kernel's headless turns share (made on first use)."""
    return kernel_host().own_thread("headless", digits=12)


def new_headless_thread() -> str:
    """Starts a fresh headless thread for the turns from here on (``%gth --new``)."""
    return kernel_host().own_thread("headless", digits=12, fresh=True)


# -- the turn ----------------------------------------------------------------------------------


@dataclass
class HeadlessOutcome:
    """What a headless turn left: the thread's view of it and the notes the output adds."""

    view: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    error: str | None = None


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
    when it failed or ran out of time). Each run starts as every host's does
    (``RunService.start``)."""
    from ...agui.history import thread_view
    from ...agui.run import runtime_of

    runtime = await runtime_of(kernel_host().registry(), agent)
    turn = f"turn-{uuid.uuid4().hex}"
    notes: list[str] = []
    error: str | None = None
    kernel.turn_ends_at(time.monotonic() + timeout)  # code still running then is interrupted
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
    tools = declared_tools()
    props = {"gth": {"turnId": turn}}
    messages: list[Any] = [agui.UserMessage(id=f"headless-msg-{uuid.uuid4().hex}", content=prompt)]
    entries: list[agui.ResumeEntry] | None = None
    loop = asyncio.get_running_loop()
    start = loop.time()
    runs = kernel_host().runs()

    async def retry() -> bool:  # a run of another client on this thread: wait it out
        if loop.time() - start >= wait:
            return False
        await asyncio.sleep(0.25)
        return True

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
        pending: list[PendingInterrupt] = []

        def take(item: Any) -> None:
            nonlocal pending
            if isinstance(item, RunEnd):
                pending = item.pending

        await runs.start(runtime, request, take, kernel=kernel, retry=retry)
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
    try:
        jupyter = getattr(kernel_host().registry().config, "jupyter", None)
    except Exception:  # a configuration that fails to load fails the run itself, with its error
        jupyter = None
    timeout = getattr(jupyter, "headless_timeout_seconds", None) or DEFAULT_TIMEOUT_S
    return float(timeout), bool(getattr(jupyter, "save_photos", False))


def render(
    view: Mapping[str, Any], *, prompt: str, save_photos: bool, notes: Sequence[str]
) -> dict[str, str]:
    """The turn's static copy (``copy.render_static_copy``)."""
    from ...copy.render import render_static_copy

    return render_static_copy(
        view, prompt=prompt, save_photos=save_photos, notes=list(notes), thread_total=True
    )


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
    timeout, save_photos = _jupyter_settings()
    main = MainThread()
    work = run_turn(
        prompt,
        thread=thread or headless_thread_id(),
        agent=agent,
        kernel=HeadlessKernel(main),
        timeout=timeout,
    )
    turn = kernel_host().loop().submit(work)
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
    notes = [*outcome.notes, *main.notes]
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
