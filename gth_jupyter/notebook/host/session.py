"""``Session``: the agent headless inside the kernel, for scripts and quick questions.

A session starts each run exactly as the hosts do (``RunService.start``): its prompt is a
``RunAgentInput`` with one user message, so a thread it shares with a widget is treated the same
way (a client tool the widget left unanswered is closed; an approval waiting for a person
refuses the prompt with ``interrupt_pending``). A kernel already runs an event loop, so a session
keeps its own loop on a daemon thread and ``ask`` blocks on it; ``aask`` is the awaitable form
for code that is itself async.

In a notebook a session is one more client of the notebook's conversation: by default it talks on
the thread the ``%gth`` widgets use and keeps it in the SQLite file the server extension and the
kernel's own agent keep threads in, so each sees what the others said, and a run is refused with
``409 run_busy`` while another holds the thread, in whichever process that run is. Outside a
notebook (a script, a terminal) a session keeps a fresh thread in memory. A session holds an
SQLite connection once it has asked: ``close()`` (or ``with Session() as s:``) lets it go, as
does dropping the session.
"""

from __future__ import annotations

import asyncio
import functools
import sys
import threading
import uuid
import weakref
from pathlib import Path
from typing import Any, Literal, TextIO

import ag_ui.core as agui

from ...agent.registry import AgentRegistry
from ...agent.runtime import Runtime
from ...agui.run import runtime_of
from ...config.loader import load_config
from ...contract.events import TextEvent
from ...contract.names import DEFAULT_AGENT
from ...contract.run import RunEnd, StreamItem
from ...contract.usage import ModelCall, UsageAccount
from ...runs.service import Retry, RunService
from ...store.checkpoint import CheckpointStore
from ._host import NOTEBOOK_COMMAND
from .kernel_access import in_kernel_access, main_thread_waiting
from .loop import LoopThread
from .threads import in_kernel, notebook_thread_id
from .turns import POLL_S, EarlierTurn

__all__ = ["Session"]

#: How long ``ask`` waits in a notebook, by default, for the cells before it and a busy thread.
DEFAULT_WAIT_S = 600.0


class Answer(str):
    """The agent's final text: a plain ``str`` that, as a cell's value, renders as the Markdown
    it is (``print`` still shows the raw text). ``run_id`` is the run that answered (a later
    ``ask(..., parent_run_id=answer.run_id)`` branches from it).

    The Markdown shown is the model's made safe (``copy/markdown.py``): JupyterLab renders a fresh
    output's raw HTML, so ``<img src=x onerror=…>`` in an answer would run in the page."""

    def _repr_markdown_(self) -> str:
        from ...copy.markdown import markdown_to_markdown

        return markdown_to_markdown(str(self))

    run_id: str = ""
    #: What the run's model calls counted (AG-UI ``TokenUsage`` objects) and cost
    #: (``{"usd", "source"}``; ``None`` when no call reported usage).
    usage: list[dict[str, Any]] = []
    cost: dict[str, Any] | None = None


class Session:
    """A conversation with the configured agent, run in this process.

    Args:
        config: a configuration file; default: the one found from the working directory.
        thread: which conversation to continue. ``None`` (the default) is the notebook's thread
            in a notebook kernel, the one ``%gth`` shows, and a fresh thread elsewhere;
            ``"notebook"`` asks for the notebook's thread, ``"new"`` for a fresh thread of this
            session's own; any other string names a thread.
        agent: the agent's name (``default``: the configured agent).
        checkpointer: where threads are kept. ``None`` (the default) is ``"sqlite"`` in a
            notebook kernel, the file the server extension and the kernel's agent share, and
            ``"memory"`` elsewhere (private to this session, gone when it is).
        checkpoint_path: another SQLite file (set it to the server's ``checkpoint_path`` when
            that is configured); default: ``gth_jupyter/threads.sqlite`` in the Jupyter data
            directory.

    ``Session(thread="new", checkpointer="memory")`` is a scratch conversation that touches
    nothing the notebook's chat shows.
    """

    def __init__(
        self,
        config: str | Path | None = None,
        *,
        thread: str | None = None,
        agent: str = DEFAULT_AGENT,
        checkpointer: Literal["sqlite", "memory"] | None = None,
        checkpoint_path: str | Path | None = None,
    ) -> None:
        notebook = in_kernel()
        self.thread_id = _thread_for(thread, notebook)
        # Run All runs a session's cell before the pages of the %gth cells above it have sent.
        self._wait = DEFAULT_WAIT_S if notebook else 0.0
        self.agent = agent
        kind = checkpointer or ("sqlite" if notebook else "memory")
        self.registry = AgentRegistry(
            load_config(config),
            command=NOTEBOOK_COMMAND,
            store=CheckpointStore(kind, checkpoint_path),
        )
        # This session's runs (read in this process: nothing journaled, nothing to follow).
        self._runs = RunService()
        # The loop ``ask`` runs on, once created; shared with the finalizer that closes the store.
        self._loops: list[LoopThread] = []
        self._finalizer = weakref.finalize(self, _release, self.registry, self._loops)
        self._finalizer.atexit = False  # at exit the process ends the connection's thread

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the session's store connection and event loop; it cannot ask again."""
        closing = self._finalizer()
        if closing is not None:
            closing.join(timeout=10)

    @property
    def model_label(self) -> str:
        return str(self.registry.info()["model"])

    async def aask(
        self,
        prompt: str,
        *,
        stream: TextIO | None = None,
        wait: float | None = None,
        parent_run_id: str | None = None,
    ) -> Answer:
        """Sends ``prompt`` and returns the agent's final text (printed as it arrives if
        ``stream`` is given). Runs that stop on a client tool return the text so far.

        A session's turns append to its thread (it is a script's conversation, not a cell's),
        unless ``parent_run_id`` names the run to branch from (an ``Answer.run_id``; the
        thread's id for its start): see docs/http-contract.md, Branches.

        In a notebook, like a ``%gth`` cell, a session takes its turn after the cells the kernel
        ran before it on its thread and waits out a run in progress, for up to ``wait`` seconds
        (default: ``DEFAULT_WAIT_S`` in a notebook kernel, ``0`` elsewhere, where a busy thread
        is refused at once). Raises :class:`~gth_jupyter.agui.ProtocolError` when the thread
        still refuses the prompt (another run in progress: ``run_busy``; an approval waiting:
        ``interrupt_pending``)."""
        if not self._finalizer.alive:
            raise RuntimeError("This session is closed.")
        runtime = await runtime_of(self.registry, self.agent)
        run_id = f"session-run-{uuid.uuid4().hex[:12]}"
        request = agui.RunAgentInput(
            thread_id=self.thread_id,
            run_id=run_id,
            parent_run_id=parent_run_id,
            messages=[agui.UserMessage(id=f"session-msg-{uuid.uuid4().hex}", content=prompt)],
            tools=[],
            context=[],
            state=None,
            # Named, like a cell's turn, so the thread's account lists it (``usage``).
            forwarded_props={"gth": {"turnId": run_id}},
        )
        if wait is None:
            wait = self._wait
        parts: list[str] = []
        account = UsageAccount()

        def take(item: StreamItem | RunEnd) -> None:
            if isinstance(item, ModelCall):
                account.add(item)
            elif isinstance(item, TextEvent):
                parts.append(item.delta)
                if stream is not None:
                    stream.write(item.delta)
                    stream.flush()
            elif isinstance(item, RunEnd) and stream is not None:
                stream.write("\n")

        retry = await self._in_turn(runtime, wait)
        await self._runs.start(runtime, request, take, kernel=in_kernel_access(), retry=retry)
        answer = Answer("".join(parts))
        answer.run_id = run_id
        answer.usage, answer.cost = account.entries(), runtime.cost(account)
        return answer

    async def ausage(self) -> dict[str, Any]:
        """The thread's account, as ``GET gth/threads/{id}`` gives it: ``usage`` and ``cost``
        (what the thread spent, every branch counted) and ``turns``, each with its ``turnId``,
        ``runId``, ``usage`` and ``cost`` (on the current branch)."""
        from ...agui.history import thread_view

        runtime = await runtime_of(self.registry, self.agent)
        view = await thread_view(runtime, self.thread_id)
        keys = ("turnId", "runId", "usage", "cost")
        turns = [{k: t.get(k) for k in keys} for t in view["turns"]]
        return {"usage": view["usage"], "cost": view["cost"], "turns": turns}

    @property
    def usage(self) -> dict[str, Any]:
        """Blocking :meth:`ausage` (what this thread's turns counted and cost)."""
        if not self._finalizer.alive:
            raise RuntimeError("This session is closed.")
        if not self._loops:
            self._loops.append(LoopThread())
        return self._loops[0].run(self.ausage())

    def ask(
        self,
        prompt: str,
        *,
        stream: bool = False,
        wait: float | None = None,
        parent_run_id: str | None = None,
    ) -> Answer:
        """Blocking ``aask``; safe to call from a notebook cell."""
        if not self._finalizer.alive:
            raise RuntimeError("This session is closed.")
        if not self._loops:
            self._loops.append(LoopThread())
        out = sys.stdout if stream else None
        with main_thread_waiting():
            asked = self.aask(prompt, stream=out, wait=wait, parent_run_id=parent_run_id)
            return self._loops[0].run(asked)

    async def _in_turn(self, runtime: Runtime, wait: float) -> Retry:
        """Waits until the kernel's earlier ``%gth`` turn on the thread is done
        (``turns.EarlierTurn``, where the kernel side's turn order is decided); answers how to
        wait again while a run holds the thread (``RunService.start``'s ``retry``), for up to
        ``wait`` seconds."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        read = functools.partial(runtime.thread_state, self.thread_id)
        earlier = EarlierTurn(self.thread_id, read, wait, start)

        async def retry() -> bool:
            if loop.time() - start >= wait:
                return False
            await asyncio.sleep(POLL_S)
            await earlier.done()
            return True

        await earlier.done()
        return retry


def _release(registry: AgentRegistry, loops: list[LoopThread]) -> threading.Thread:
    """Closes the store and stops the loop, on a thread of its own: a finalizer may run on any
    thread, the session's loop thread included, and must not wait on it."""

    def close() -> None:
        asyncio.run(registry.close())
        for loop in loops:
            loop.stop()

    closing = threading.Thread(target=close, daemon=True, name="gth-session-close")
    closing.start()
    return closing


def _thread_for(thread: str | None, notebook: bool) -> str:
    if thread == "notebook" or (thread is None and notebook):
        return notebook_thread_id()
    if thread is None or thread == "new":
        return f"session-{uuid.uuid4().hex[:12]}"
    return thread
