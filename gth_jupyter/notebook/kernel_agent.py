"""The agent as the kernel runs it, for hosts with no reachable server extension.

VS Code and Colab render widgets without a Jupyter server page, so the widget's AG-UI requests
travel over its comm instead, and this module runs them in the kernel: one registry per kernel
(configuration read from the kernel's working directory), on a private event loop thread so a
busy cell does not stall a stream.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from ..agent import AgentRegistry, CheckpointStore
from ..config import load_config

__all__ = ["NOTEBOOK_COMMAND", "LoopThread", "kernel_loop", "kernel_registry", "reset_kernel_agent"]

T = TypeVar("T")

NOTEBOOK_COMMAND = "notebook"


class LoopThread:
    """An asyncio loop on a daemon thread; coroutines are submitted from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="gth-loop")
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.submit(coro).result()


_lock = threading.Lock()
_registry: AgentRegistry | None = None
_loop: LoopThread | None = None


def kernel_loop() -> LoopThread:
    global _loop
    with _lock:
        if _loop is None:
            _loop = LoopThread()
        return _loop


def kernel_registry() -> AgentRegistry:
    """The kernel's agents, built once from the configuration found from the working dir."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = AgentRegistry(
                load_config(), command=NOTEBOOK_COMMAND, store=CheckpointStore("sqlite")
            )
        return _registry


def reset_kernel_agent(registry: AgentRegistry | None = None) -> None:
    """Replaces the kernel's registry (tests, or after editing the configuration)."""
    global _registry
    with _lock:
        _registry = registry
