"""The agent as the kernel runs it, for hosts with no reachable server extension.

VS Code and Colab render widgets without a Jupyter server page, so the widget's AG-UI requests
travel over its comm instead, and this module runs them in the kernel: one registry per kernel
(the configuration of the server that started the kernel, else the one found from the kernel's
working directory), on a private event loop thread so a
busy cell does not stall a stream.

Building the agent imports LangChain and LangGraph, which takes seconds, so nothing here does it
before a comm request needs the agent. What a ``%gth`` cell needs at once, the model's name for
the chat's header, :func:`configured_model` reads from the configuration alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ...agent import AgentRegistry
    from ...config import GthConfig
    from ...config.handover import Handover

__all__ = [
    "NOTEBOOK_COMMAND",
    "LoopThread",
    "ModelLabel",
    "built_registry",
    "configured_model",
    "handed_jupyter",
    "kernel_loop",
    "kernel_registry",
    "reset_kernel_agent",
]

T = TypeVar("T")

NOTEBOOK_COMMAND = "notebook"
#: What the header shows for the offline models (the names ``describe_model`` gives them).
_OFFLINE_LABELS = {"demo": "gth-demo (offline)", "fake": "scripted"}


class LoopThread:
    """An asyncio loop on a daemon thread; coroutines are submitted from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True, name="gth-loop")
        self._thread.start()

    def _serve(self) -> None:
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.submit(coro).result()

    def stop(self) -> None:
        """Ends the loop (closing it) once what it is running yields; idempotent."""
        with contextlib.suppress(RuntimeError):  # closed already
            self.loop.call_soon_threadsafe(self.loop.stop)


@dataclass(frozen=True)
class ModelLabel:
    """What a chat's header says about the model before any agent is built."""

    label: str
    offline: bool


_lock = threading.Lock()
_registry: AgentRegistry | None = None
_config: GthConfig | None = None
_loop: LoopThread | None = None


def kernel_loop() -> LoopThread:
    global _loop
    with _lock:
        if _loop is None:
            _loop = LoopThread()
        return _loop


def _kernel_config() -> GthConfig:
    """The configuration the kernel's agent runs with, read once per kernel: the server's,
    when a server started this kernel (``config/handover.py``); else the one found from the
    working directory (nbconvert, papermill, VS Code)."""
    global _config
    if _config is None:
        from ...config import load_config

        handed = server_handover()
        if handed is not None:
            _config = load_config(files=handed.files, cwd=handed.root)
        else:
            _config = load_config()
    return _config


def server_handover() -> Handover | None:
    """What the server that started this kernel handed it (imported when first asked)."""
    from ...config.handover import server_handover as read

    return read()


def _kernel_root() -> Path:
    """Where the kernel's agent works: its server's root, else the working directory."""
    handed = server_handover()
    return handed.root if handed is not None else Path.cwd()


def kernel_registry() -> AgentRegistry:
    """The kernel's agents, built once from the kernel's configuration (see above)."""
    global _registry
    with _lock:
        if _registry is None:
            from ...agent import AgentRegistry
            from ...store import CheckpointStore

            _registry = AgentRegistry(
                _kernel_config(),
                command=NOTEBOOK_COMMAND,
                store=CheckpointStore("sqlite"),
                cwd=_kernel_root(),
            )
        return _registry


def built_registry() -> AgentRegistry | None:
    """The kernel's agents if something built them already, else ``None`` (nothing built)."""
    with _lock:
        return _registry


def handed_jupyter() -> dict[str, Any] | None:
    """The server's ``jupyter`` settings (camelCase), when a server started this kernel."""
    handed = server_handover()
    return dict(handed.jupyter) if handed is not None else None


def configured_model() -> ModelLabel | None:
    """The model the kernel's configuration names, without building it (``None``: unknown).

    A built kernel agent answers for itself. Otherwise the ``llm`` section is read from the JSON
    configuration files; a ``.gsloth.config.py`` is not run for a label (its model may be a live
    object whose package takes seconds to import), nor is a configuration that fails to load:
    the page then labels the chat from the agent's own ``info``, which it asks for anyway.
    """
    with _lock:
        registry = _registry
    if registry is not None:
        info = registry.info()
        return ModelLabel(str(info.get("model") or ""), bool(info.get("offline")))
    from ...config import ConfigError
    from ...config.loader import find_config_file, global_config_file

    handed = server_handover()
    if handed is not None:
        files: tuple[Path | None, ...] = handed.files
    else:
        files = (global_config_file(), find_config_file(Path.cwd()))
    if any(file is not None and file.suffix == ".py" for file in files):
        return None
    try:
        with _lock:  # read once per kernel; the agent, if ever built, uses the same
            llm = _kernel_config().llm
    except ConfigError:
        return None
    kind = llm.type if llm is not None else "demo"
    if kind in _OFFLINE_LABELS:
        return ModelLabel(_OFFLINE_LABELS[kind], offline=True)
    assert llm is not None
    extra = llm.model_extra or {}
    name = extra.get("modelDisplayName") or llm.model
    return ModelLabel(str(name or kind), offline=False)


def reset_kernel_agent(registry: AgentRegistry | None = None) -> None:
    """Replaces the kernel's registry and forgets its configuration (tests, or after editing
    the configuration)."""
    global _registry, _config
    with _lock:
        _registry = registry
        _config = registry.config if registry is not None else None
