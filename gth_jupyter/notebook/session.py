"""``Session``: the agent headless inside the kernel, for scripts and quick questions.

A kernel already runs an event loop, so a session keeps its own loop on a daemon thread and
``ask`` blocks on it; ``aask`` is the awaitable form for code that is itself async.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import TextIO

from langchain_core.messages import HumanMessage

from ..agent.checkpoint import CheckpointStore
from ..agent.events import TextEvent
from ..agent.runtime import RunEnd, RunPlan
from ..config import load_config
from ..server.agents import DEFAULT_AGENT, AgentRegistry
from .kernel_agent import NOTEBOOK_COMMAND, LoopThread


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
        ``stream`` is given). Runs that stop on a client tool return the text so far."""
        runtime = await self.registry.runtime(self.agent)
        claim = runtime.claim(self.thread_id)
        parts: list[str] = []
        try:
            plan = RunPlan(self.thread_id, messages=[HumanMessage(prompt)])
            async for item in runtime.stream(plan):
                if isinstance(item, TextEvent):
                    parts.append(item.delta)
                    if stream is not None:
                        stream.write(item.delta)
                        stream.flush()
                elif isinstance(item, RunEnd) and stream is not None:
                    stream.write("\n")
        finally:
            claim.release()
        return "".join(parts)

    def ask(self, prompt: str, *, stream: bool = False) -> str:
        """Blocking ``aask``; safe to call from a notebook cell."""
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop.run(self.aask(prompt, stream=sys.stdout if stream else None))
