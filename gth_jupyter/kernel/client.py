"""Our own client of a live kernel: its own session id, replies routed by ``msg_id``, subshells.

A :class:`KernelClient` wraps a ``jupyter_client`` :class:`AsyncKernelClient` opened from a
connection (a connection-info dict or file, or a running kernel manager) with a **fresh session
id**: reusing the notebook's client identity would take over its ROUTER socket and orphan it.

A :class:`~gth_jupyter.kernel.router.Router` hands each message to the request whose ``msg_id``
is its parent, so several requests may be in flight at once (introspection on a subshell while
agent code runs on the main shell). A request ends when both its ``status: idle`` (IOPub) and
its reply (shell or control) have arrived, never on a timer alone. A timeout on the main shell
interrupts the kernel and then waits a short while for the interrupted request to finish.

Subshells (ipykernel 7, JEP 91) are used where ``kernel_info_reply.supported_features`` lists
``"kernel subshells"``: ``create_subshell_request`` on the control channel gives a
``subshell_id`` that goes into the header of shell requests. ``jupyter_client`` 8.10 has no
subshell API, so those messages are built here. Where subshells are missing (or turned off), a
request meant for a subshell runs on the main shell and :attr:`Execution.shell` says so.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from jupyter_client.asynchronous.client import AsyncKernelClient

from gth_jupyter.kernel.router import KernelClientError, Router

Shell = Literal["main", "subshell"]
SUBSHELL_FEATURE = "kernel subshells"
SETTLE_SECONDS = 5.0
"""How long to wait, after an interrupt, for the interrupted request's reply and idle."""


@dataclass
class Execution:
    """What one request produced: its reply, its IOPub outputs, and where and how it ran."""

    msg_id: str
    shell: Shell
    reply: dict[str, Any] = field(default_factory=dict)
    """The ``execute_reply`` content (empty when the reply never came)."""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    """IOPub messages of this request, in order: ``{"msg_type": ..., "content": ...}``."""
    started: bool = False
    """True once the kernel began this request (its ``status: busy``); false while it queued."""
    timed_out: bool = False
    interrupted: bool = False
    completed: bool = False
    """True when both the reply and ``status: idle`` arrived."""
    elapsed: float = 0.0
    note: str = ""


class KernelClient:
    """An async client of one kernel, safe for concurrent requests (replies routed by msg_id)."""

    def __init__(
        self,
        client: AsyncKernelClient,
        *,
        manager: Any = None,
        use_subshells: bool = True,
    ) -> None:
        self._client = client
        self._manager = manager
        self._use_subshells = use_subshells
        self._router = Router(client)
        self._subshell_id: str | None = None
        self._subshell_lock = asyncio.Lock()
        self.kernel_info: dict[str, Any] = {}

    @classmethod
    def from_connection(
        cls, connection: dict[str, Any] | str | Path, *, use_subshells: bool = True
    ) -> KernelClient:
        """A client for a connection-info dict or connection file, with a new session id."""
        client = AsyncKernelClient()
        if isinstance(connection, dict):
            client.load_connection_info(connection)  # type: ignore[arg-type]
        else:
            client.load_connection_file(str(connection))
        return cls(client, use_subshells=use_subshells)

    @classmethod
    def from_manager(cls, manager: Any, *, use_subshells: bool = True) -> KernelClient:
        """A client for a running kernel manager's kernel; the manager is used to interrupt it.

        The manager's own session (``manager.client()`` shares it) is deliberately not used.
        """
        client = AsyncKernelClient()
        client.load_connection_info(manager.get_connection_info(session=False))
        return cls(client, manager=manager, use_subshells=use_subshells)

    @property
    def session_id(self) -> str:
        """This client's own session id (never the notebook's)."""
        return str(self._client.session.session)

    @property
    def subshells_supported(self) -> bool:
        """Whether the kernel advertises subshells (known after :meth:`start`)."""
        features = self.kernel_info.get("supported_features", [])
        return SUBSHELL_FEATURE in features

    async def start(self, timeout: float = 30.0) -> None:
        """Open the channels, wait for the kernel, and read its ``kernel_info_reply``."""
        # No heartbeat: a fresh heartbeat misses beats on a loaded machine and wait_for_ready
        # then reports a live kernel as dead; readiness is the kernel_info reply itself.
        self._client.start_channels(hb=False)
        self._router.start()
        await self._handshake(timeout)

    async def ready(self, timeout: float = 30.0) -> None:
        """Waits until the kernel answers again, e.g. after a restart: a request sent while the
        new kernel is not yet listening can be lost, and would then wait out its whole queue
        time."""
        await self._handshake(timeout)

    async def _handshake(self, timeout: float) -> None:
        """Ask for ``kernel_info`` until both its reply and its IOPub status arrive.

        The request goes on the control channel, which a running cell does not hold up (on the
        shell it would wait for the cell to end); every other try goes on the shell, for a
        kernel that answers it only there.

        ZeroMQ's IOPub subscription connects some time after the socket opens, and messages
        published before that are lost; the IOPub status of our own request proves it is up.
        (``jupyter_client``'s ``wait_for_ready`` instead drains IOPub until it has been quiet
        for 0.2 s, which never happens beside a cell that prints; our router needs no drain.)
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        tries = 0
        while loop.time() < deadline:
            msg = self._client.session.msg("kernel_info_request", {})
            channel_used = "control" if tries % 2 == 0 else "shell"
            tries += 1
            replied = subscribed = False
            with self._router.route(msg) as queue:
                self._router.send(channel_used, msg)
                end = min(deadline, loop.time() + 1.0)
                while not (replied and subscribed):
                    try:
                        channel, message = await asyncio.wait_for(queue.get(), end - loop.time())
                    except (asyncio.TimeoutError, ValueError):
                        break
                    if channel == channel_used:
                        self.kernel_info = message.get("content", {})
                        replied = True
                    elif channel == "iopub":
                        subscribed = True
            if replied and subscribed:
                return
        raise KernelClientError(
            f"the kernel did not answer in {timeout:g} s", code="kernel_timeout"
        )

    async def close(self) -> None:
        """Delete our subshell, stop the readers and close the channels."""
        if self._subshell_id is not None:
            msg = self._client.session.msg(
                "delete_subshell_request", {"subshell_id": self._subshell_id}
            )
            with contextlib.suppress(Exception):
                await self._router.request("control", msg, 2.0)
            self._subshell_id = None
        await self._router.stop()
        self._client.stop_channels()

    async def __aenter__(self) -> KernelClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def interrupt(self) -> None:
        """Interrupt the kernel (kernel-wide: a running user cell stops too)."""
        if self._manager is not None:
            await _maybe_await(self._manager.interrupt_kernel())
            return
        msg = self._client.session.msg("interrupt_request", {})
        with contextlib.suppress(asyncio.TimeoutError):
            await self._router.request("control", msg, SETTLE_SECONDS)

    async def execute(
        self,
        code: str,
        *,
        shell: Shell = "main",
        silent: bool = False,
        store_history: bool = False,
        user_expressions: dict[str, str] | None = None,
        timeout: float = 30.0,
        interrupt_on_timeout: bool = True,
        queue_timeout: float | None = None,
    ) -> Execution:
        """Run ``code``; collect its outputs and reply by ``msg_id`` until idle and replied.

        ``timeout`` counts from the send, or, when ``queue_timeout`` is given, from the moment
        the kernel starts the request, which may first wait up to ``queue_timeout`` behind the
        cells queued before it (as a cell would).

        ``stop_on_error`` is always false, so a failing request never aborts the user's queued
        cells. On the main shell a timeout interrupts the kernel, unless ``interrupt_on_timeout``
        is false or the request never started (it queued behind another cell, which an
        interrupt would stop instead). On a subshell it never does: an interrupt cannot stop a
        subshell thread, but it would stop the user's cell. A subshell the kernel no longer
        knows (after a restart) is created again, once.
        """
        for _attempt in range(2):
            execution = await self._execute_once(
                code,
                shell,
                silent,
                store_history,
                user_expressions,
                timeout,
                interrupt_on_timeout,
                queue_timeout,
            )
            if execution.reply.get("ename") != "UnknownSubshellError":
                break
            self._subshell_id = None  # the kernel restarted: make a new subshell, once
        return execution

    async def _execute_once(
        self,
        code: str,
        shell: Shell,
        silent: bool,
        store_history: bool,
        user_expressions: dict[str, str] | None,
        timeout: float,
        interrupt_on_timeout: bool,
        queue_timeout: float | None,
    ) -> Execution:
        subshell_id: str | None = None
        note = ""
        if shell == "subshell":
            subshell_id = await self._subshell()
            if subshell_id is None:
                note = (
                    "subshells are turned off; ran on the main shell"
                    if not self._use_subshells
                    else "the kernel has no subshells; ran on the main shell (it may queue)"
                )
        content = {
            "code": code,
            "silent": silent,
            "store_history": store_history and not silent,
            "user_expressions": user_expressions or {},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        msg = self._client.session.msg("execute_request", content)
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        used: Shell = "subshell" if subshell_id is not None else "main"
        interrupt = interrupt_on_timeout and used == "main"
        execution = await self._collect(msg, used, timeout, interrupt, queue_timeout)
        execution.note = "; ".join(n for n in (note, execution.note) if n)
        return execution

    async def _subshell(self) -> str | None:
        if not self._use_subshells or not self.subshells_supported:
            return None
        async with self._subshell_lock:
            if self._subshell_id is None:
                msg = self._client.session.msg("create_subshell_request", {})
                reply = await self._router.request("control", msg, 10.0)
                self._subshell_id = str(reply["content"]["subshell_id"])
            return self._subshell_id

    async def _collect(
        self,
        msg: dict[str, Any],
        shell: Shell,
        timeout: float,
        interrupt: bool,
        queue_timeout: float | None = None,
    ) -> Execution:
        msg_id = str(msg["header"]["msg_id"])
        execution = Execution(msg_id=msg_id, shell=shell)
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + (timeout if queue_timeout is None else queue_timeout)
        idle = replied = False
        with self._router.route(msg) as queue:
            self._router.send("shell", msg)
            while not (idle and replied):
                remaining = deadline - loop.time()
                if remaining <= 0:
                    # A request still queued behind someone's cell is not interrupted: the
                    # interrupt would stop that cell, not this request.
                    if execution.timed_out or not interrupt or not execution.started:
                        execution.timed_out = True
                        break
                    execution.timed_out = execution.interrupted = True
                    await self.interrupt()
                    deadline = loop.time() + SETTLE_SECONDS
                    continue
                try:
                    channel, message = await asyncio.wait_for(queue.get(), remaining)
                except asyncio.TimeoutError:
                    continue
                msg_type = message["header"]["msg_type"]
                if channel == "shell":
                    execution.reply = message["content"]
                    replied = True
                elif msg_type == "status":
                    state = message["content"].get("execution_state")
                    if state == "busy" and not execution.started and queue_timeout is not None:
                        deadline = loop.time() + timeout  # the run's own time starts now
                    execution.started = execution.started or state == "busy"
                    idle = idle or state == "idle"
                elif channel == "iopub" and msg_type != "execute_input":
                    execution.outputs.append({"msg_type": msg_type, "content": message["content"]})
        execution.completed = idle and replied
        execution.elapsed = loop.time() - started
        if execution.interrupted:
            execution.note = f"timed out after {timeout:g} s; the kernel was interrupted"
        elif execution.timed_out and not execution.started:
            waited = timeout if queue_timeout is None else queue_timeout
            execution.note = (
                f"the kernel was busy with another request for {waited:g} s; this one is still"
                f" queued on the {shell} shell and will run when that ends (nothing interrupted)"
            )
        elif execution.timed_out:
            execution.note = f"timed out after {timeout:g} s on the {shell} shell (not interrupted)"
        return execution


async def _maybe_await(value: Any) -> None:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        await value
