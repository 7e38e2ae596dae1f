"""A live kernel as the agent's kernel tools reach it, from the Jupyter server or from inside.

Both kinds answer the same JSON-able dicts (the agent's ``KernelAccess`` contract), so a tool
result does not depend on where the agent runs:

- :class:`ClientAccess`: the agent runs in the Jupyter server; it reaches the notebook's kernel
  through our own :class:`KernelClient`, introspection on a subshell (or queued on the main shell
  where there are none, which ``note`` says), code on the main shell.
- :class:`InKernelAccess`: the agent runs on its own thread inside the kernel (comm transport).
  Introspection looks at the namespace where it is (the same inspector code, called directly);
  code goes to the kernel's main shell through our own client of the kernel itself, so it runs
  on the main thread as a cell would, queued behind the user's cells.

A failure is ``{"error": code, "message": text}``, never a raise: a tool reports it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from gth_jupyter.kernel import _inspector
from gth_jupyter.kernel.client import KernelClient
from gth_jupyter.kernel.execute import RunResult, run_python
from gth_jupyter.kernel.introspect import (
    DATA_CONTEXTS,
    Introspection,
    describe_variable,
    list_variables,
    valid_name,
)
from gth_jupyter.kernel.router import KernelClientError

__all__ = ["ClientAccess", "InKernelAccess", "error", "run_answer"]

log = logging.getLogger(__name__)

Opener = Callable[[], Awaitable[KernelClient]]


def error(code: str, message: str) -> dict[str, Any]:
    """The failure answer every access method gives."""
    return {"error": code, "message": message}


def introspection_answer(found: Introspection) -> dict[str, Any]:
    """An inspector answer with where it ran and what the client noticed."""
    answer = dict(found.data)
    answer["ranOn"] = found.shell
    if found.note:
        answer["note"] = found.note
    return answer


def run_answer(result: RunResult) -> dict[str, Any]:
    """A :class:`RunResult` as a tool answers it (images as ``{"mimeType", "data"}``)."""
    answer = result.to_dict()
    answer["images"] = [{"mimeType": i.mime_type, "data": i.data} for i in result.images]
    answer.pop("timed_out", None)
    answer["elapsed"] = round(result.elapsed, 3)
    if not answer["note"]:
        answer.pop("note")
    return answer


class ClientAccess:
    """A kernel reached through our own client; the client is opened on first use."""

    def __init__(self, opener: Opener, *, introspection_timeout: float = 10.0) -> None:
        self._opener = opener
        self._timeout = introspection_timeout

    async def _client(self) -> KernelClient | dict[str, Any]:
        try:
            return await self._opener()
        except KernelClientError as exc:
            return error(exc.code, str(exc))
        except Exception as exc:  # a kernel that died or never answers
            log.warning("gth-jupyter: could not reach the kernel: %s", exc)
            return error("kernel_unavailable", f"could not reach the kernel: {exc}")

    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]:
        client = await self._client()
        if isinstance(client, dict):
            return client
        found = await list_variables(client, offset=offset, limit=limit, timeout=self._timeout)
        return introspection_answer(found)

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]:
        client = await self._client()
        if isinstance(client, dict):
            return client
        found = await describe_variable(
            client,
            name,
            data_context=data_context,  # type: ignore[arg-type]  # checked by the inspector
            timeout=self._timeout,
        )
        return introspection_answer(found)

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]:
        client = await self._client()
        if isinstance(client, dict):
            return client
        try:
            return run_answer(await run_python(client, code, timeout=timeout))
        except KernelClientError as exc:
            return error(exc.code, str(exc))


class InKernelAccess:
    """The kernel this agent runs in: introspection in place, code on the main shell.

    ``namespace`` gives the user namespace; ``opener`` our own client of this kernel (one per
    event loop); ``main_blocked`` is true while the main thread itself waits for the agent (a
    ``Session.ask`` in a cell), when code sent to the main shell could never run.
    """

    def __init__(
        self,
        namespace: Callable[[], dict[str, Any]],
        opener: Opener,
        *,
        main_blocked: Callable[[], bool] = lambda: False,
        introspection_timeout: float = 10.0,
    ) -> None:
        self._namespace = namespace
        self._timeout = introspection_timeout
        self._client = ClientAccess(opener)
        self._main_blocked = main_blocked

    async def _inspect(self, arguments: dict[str, Any]) -> dict[str, Any]:
        # A copy of the namespace, taken at once (atomic under the GIL), is read on a worker
        # thread so a large DataFrame's statistics never stall the agent's loop.
        namespace = dict(self._namespace())
        work = asyncio.to_thread(_inspector.run, namespace, json.dumps(arguments))
        try:
            text = await asyncio.wait_for(work, self._timeout)
        except asyncio.TimeoutError:  # a user's __repr__ that never returns, say
            return error("kernel_busy", f"the inspection took over {self._timeout:g} s")
        answer: dict[str, Any] = json.loads(text)
        answer["ranOn"] = "in-kernel"
        return answer

    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]:
        return await self._inspect({"op": "list", "offset": offset, "limit": limit})

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]:
        if not valid_name(name):
            return error("invalid_name", "give a plain variable name")
        if data_context not in DATA_CONTEXTS:
            return error("invalid_data_context", f"unknown {data_context!r}")
        return await self._inspect({"op": "describe", "name": name, "data_context": data_context})

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]:
        if self._main_blocked():
            return error(
                "kernel_blocked",
                "the notebook's main thread is waiting for this agent (Session.ask in a cell), "
                "so code cannot run there now; ask in the %gth chat instead",
            )
        return await self._client.run_python(code, timeout)
