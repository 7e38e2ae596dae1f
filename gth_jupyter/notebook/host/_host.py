"""``KernelHost``: the one owner of what the kernel side keeps, one per kernel process.

The server hands its handlers one typed :class:`~gth_jupyter.server.host.GthHost`; this is its
counterpart in the kernel. What a kernel keeps for its life lives here and nowhere else:

- the agent it runs for comm requests and headless turns: its configuration (read once), the
  registry built from it, the loop thread it runs on, and the run service that streams its runs;
- this kernel as the agent's kernel tools reach it (``kernel_access.py``): our own client of it
  per event loop, and whether the main thread is waiting for the agent;
- the notebook's conversations: the thread of a kernel with no notebook identity
  (``threads.py``), the last ``%gth`` turn started on each thread (``turns.py``), the thread
  headless turns share (``headless/``);
- the browser tools a cell registered and the widgets offering them (``client_tools.py``), and
  what each chat output shows (``cell_output.py``).

The agent runs the server's configuration when a server started this kernel (the handover,
``config/handover.py``), else the one found from the working directory (nbconvert, papermill,
VS Code). It is built on first use: building it imports LangChain and LangGraph, which take
seconds, and ``%gth`` must not wait for them before a comm request needs the agent.

:func:`kernel_host` is this process's host, made on first use; :func:`reset_kernel_host` starts
a new one (tests, or after editing the configuration).
"""

from __future__ import annotations

import threading
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .loop import LoopThread

if TYPE_CHECKING:
    import asyncio

    from ...agent.registry import AgentRegistry
    from ...agent.runtime import Runtime
    from ...config.gth_config import GthConfig
    from ...config.handover import Handover
    from ...kernel.client import KernelClient
    from ...runs.service import RunService

__all__ = [
    "NOTEBOOK_COMMAND",
    "KernelHost",
    "Offering",
    "handed_jupyter",
    "kernel_host",
    "reset_kernel_host",
    "server_handover",
]

#: The command (``.gsloth.config`` per-command rules) the notebook's agent runs as.
NOTEBOOK_COMMAND = "notebook"


class Offering(Protocol):
    """What offers the registered browser tools to the agent: each ``GthChat`` of this kernel."""

    client_tools: list[dict[str, Any]]


class KernelHost:
    """What one kernel process keeps (see the module's docstring).

    The agent's parts are made on first use by :meth:`config`, :meth:`registry`, :meth:`loop`
    and :meth:`runs`, under a lock of their own that is held while the agent is built. The rest
    is plain state, which the modules named beside each attribute read and write under
    :attr:`lock`.

    Args:
        registry: the kernel's agents (tests); default: built from the configuration on first
            use.
    """

    def __init__(self, registry: AgentRegistry | None = None) -> None:
        self._agent_lock = threading.Lock()
        self._registry = registry
        self._config: GthConfig | None = registry.config if registry is not None else None
        self._loop: LoopThread | None = None
        self._runs: RunService | None = None
        #: Guards the state below: each use is a few dictionary operations, never a wait.
        self.lock = threading.Lock()
        #: Our client of this kernel, one per event loop, and the lock each is opened under
        #: (``kernel_access.py``).
        self.clients: dict[asyncio.AbstractEventLoop, KernelClient] = {}
        self.opening: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        #: How many waits of the main thread for the agent are in progress (``run_python``
        #: refuses meanwhile instead of hanging: ``kernel_access.py``).
        self.main_waiting = 0
        #: The threads this kernel makes for itself, by kind, once made (:meth:`own_thread`).
        self.own_threads: dict[str, str] = {}
        #: The last ``%gth`` turn the kernel started on each thread (``turns.py``).
        self.last_turns: dict[str, str] = {}
        #: The browser tools cells registered, by name, and the widgets offering them
        #: (``client_tools.py``).
        self.client_tools: dict[str, dict[str, Any]] = {}
        self.widgets: weakref.WeakSet[Offering] = weakref.WeakSet()
        #: A digest of what each chat output shows now, by display id, and one runtime per
        #: registry that reads threads for them (``cell_output.py``).
        self.shown: dict[str, str] = {}
        self.readers: weakref.WeakKeyDictionary[AgentRegistry, Runtime] = (
            weakref.WeakKeyDictionary()
        )

    def config(self) -> GthConfig:
        """The configuration the kernel's agent runs with, read once per kernel."""
        with self._agent_lock:
            return self._read_config()

    def _read_config(self) -> GthConfig:
        """:meth:`config`, under the agent's lock."""
        if self._config is None:
            from ...config.loader import load_config

            handed = server_handover()
            if handed is not None:
                self._config = load_config(files=handed.files, cwd=handed.root)
            else:
                self._config = load_config()
        return self._config

    def registry(self) -> AgentRegistry:
        """The kernel's agents, built once from the kernel's configuration."""
        with self._agent_lock:
            if self._registry is None:
                from ...agent.registry import AgentRegistry
                from ...store.checkpoint import CheckpointStore

                self._registry = AgentRegistry(
                    self._read_config(),
                    command=NOTEBOOK_COMMAND,
                    store=CheckpointStore("sqlite"),
                    cwd=_kernel_root(),
                )
            return self._registry

    def built_registry(self) -> AgentRegistry | None:
        """The kernel's agents if something built them already, else ``None`` (nothing built)."""
        with self._agent_lock:
            return self._registry

    def own_thread(self, kind: str, *, digits: int, fresh: bool = False) -> str:
        """The kernel's own thread of ``kind``, made on first use or, ``fresh``, anew: a kernel
        with no notebook identity has one (``kind="kernel"``: ``threads.py``), and so do its
        headless turns (``"headless"``: ``headless/run.py``)."""
        with self.lock:
            if fresh or kind not in self.own_threads:
                self.own_threads[kind] = f"{kind}-{uuid.uuid4().hex[:digits]}"
            return self.own_threads[kind]

    def loop(self) -> LoopThread:
        """The loop thread the kernel's agent runs on (a busy cell does not stall a stream)."""
        with self._agent_lock:
            if self._loop is None:
                self._loop = LoopThread()
            return self._loop

    def runs(self) -> RunService:
        """This kernel's run service (each host process has one), made on first use by the
        loop thread, its one caller."""
        if self._runs is None:
            from ...runs.service import RunService

            self._runs = RunService()
        return self._runs

    def stop(self) -> None:
        """Stops the agent's loop thread, if one was started (a host that is replaced)."""
        with self._agent_lock:
            loop = self._loop
        if loop is not None:
            loop.stop()


_host: KernelHost | None = None
_host_lock = threading.Lock()


def kernel_host() -> KernelHost:
    """This kernel process's host, made on first use."""
    global _host
    with _host_lock:
        if _host is None:
            _host = KernelHost()
        return _host


def reset_kernel_host(registry: AgentRegistry | None = None) -> KernelHost:
    """Starts this kernel's host afresh and returns it (tests, or after editing the
    configuration): what the old one kept is forgotten and its loop thread stopped.
    ``registry``: the agents the new host runs; default: built from the configuration."""
    global _host
    with _host_lock:
        old, _host = _host, KernelHost(registry)
        host = _host
    if old is not None:
        old.stop()
    return host


def server_handover() -> Handover | None:
    """What the server that started this kernel handed it (imported when first asked)."""
    from ...config.handover import server_handover as read

    return read()


def handed_jupyter() -> dict[str, Any] | None:
    """The server's ``jupyter`` settings (camelCase), when a server started this kernel."""
    handed = server_handover()
    return dict(handed.jupyter) if handed is not None else None


def _kernel_root() -> Path:
    """Where the kernel's agent works: its server's root, else the working directory."""
    handed = server_handover()
    return handed.root if handed is not None else Path.cwd()
