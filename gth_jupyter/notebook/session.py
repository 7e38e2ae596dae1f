"""``Session``: the agent headless inside the kernel, for scripts and quick questions.

A session plans each run exactly as the hosts do (:func:`gth_jupyter.agui.plan_run`): its prompt
is a ``RunAgentInput`` with one user message, so a thread it shares with a widget is treated the
same way (a client tool the widget left unanswered is closed; an approval waiting for a person
refuses the prompt with ``interrupt_pending``). A kernel already runs an event loop, so a session
keeps its own loop on a daemon thread and ``ask`` blocks on it; ``aask`` is the awaitable form
for code that is itself async.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import TextIO

import ag_ui.core as agui

from ..agent import AgentRegistry, CheckpointStore
from ..agent.contract import DEFAULT_AGENT, RunEnd, TextEvent
from ..agui import plan_run, runtime_of
from ..config import load_config
from .kernel_agent import NOTEBOOK_COMMAND, LoopThread

__all__ = ["Session"]


class Session:
    """A conversation with the configured agent, run in this process."""

    def __init__(
        self,
        config: str | Path | None = None,
        *,
        thread: str | None = None,
        agent: str = DEFAULT_AGENT,
        checkpointer: str = "memory",
    ) -> None:
        self.thread_id = thread or f"session-{uuid.uuid4().hex[:12]}"
        self.agent = agent
        self.registry = AgentRegistry(
            load_config(config), command=NOTEBOOK_COMMAND, store=CheckpointStore(checkpointer)
        )
        self._loop: LoopThread | None = None

    @property
    def model_label(self) -> str:
        return str(self.registry.info()["model"])

    async def aask(self, prompt: str, *, stream: TextIO | None = None) -> str:
        """Sends ``prompt`` and returns the agent's final text (printed as it arrives if
        ``stream`` is given). Runs that stop on a client tool return the text so far.

        Raises :class:`~gth_jupyter.agui.ProtocolError` when the thread refuses the prompt
        (another run in progress: ``run_busy``; an approval waiting: ``interrupt_pending``)."""
        runtime = await runtime_of(self.registry, self.agent)
        request = agui.RunAgentInput(
            thread_id=self.thread_id,
            run_id=f"session-run-{uuid.uuid4().hex[:12]}",
            messages=[agui.UserMessage(id=f"session-msg-{uuid.uuid4().hex}", content=prompt)],
            tools=[],
            context=[],
            state=None,
            forwarded_props=None,
        )
        prepared = await plan_run(runtime, request)
        parts: list[str] = []
        try:
            async for item in runtime.stream(prepared.decision.plan):
                if isinstance(item, TextEvent):
                    parts.append(item.delta)
                    if stream is not None:
                        stream.write(item.delta)
                        stream.flush()
                elif isinstance(item, RunEnd) and stream is not None:
                    stream.write("\n")
        finally:
            prepared.claim.release()
        return "".join(parts)

    def ask(self, prompt: str, *, stream: bool = False) -> str:
        """Blocking ``aask``; safe to call from a notebook cell."""
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop.run(self.aask(prompt, stream=sys.stdout if stream else None))
