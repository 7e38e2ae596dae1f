"""What the kernel tools need of a live notebook kernel; each host provides its own."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["KernelAccess"]


class KernelAccess(Protocol):
    """A live notebook kernel as the kernel tools see it; each host provides its own.

    Answers are JSON-able dicts; a failure is ``{"error": code, "message": text}``, never a
    raise. ``where`` says where introspection ran (``subshell``, ``main`` or ``in-kernel``)."""

    async def list_variables(self, offset: int, limit: int) -> dict[str, Any]: ...

    async def describe_variable(self, name: str, data_context: str) -> dict[str, Any]: ...

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]: ...
