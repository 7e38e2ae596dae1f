"""Pumping one run to a client as SSE bytes: the same code for HTTP and for the widget's comm.

A transport supplies ``write`` (buffer bytes) and ``flush`` (send them); the pump streams the
run's AG-UI events through :class:`~gth_jupyter.agui.sse.SSEWriter` (coalesced token frames,
keep-alives) and, however the run ends, closes the event stream and releases the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from .run import PreparedRun, stream_events
from .sse import SSEWriter

__all__ = ["pump_sse"]


async def pump_sse(
    prepared: PreparedRun,
    write: Callable[[bytes], None],
    flush: Callable[[], Awaitable[None]],
    *,
    window: float = 0.010,
) -> None:
    """Streams ``prepared`` into the transport; a cancelled pump still sends what it wrote."""
    events = stream_events(prepared)
    try:
        async with SSEWriter(write, flush, window=window) as writer:
            async for event in events:
                await writer.send(event)
            await writer.flush()
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # the peer may be gone already
            await flush()
        raise
    finally:
        await events.aclose()
        prepared.claim.release()
