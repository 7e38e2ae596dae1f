"""Server-Sent Events framing with write coalescing and keep-alives.

Frames are the official encoder's (``data: <json>\\n\\n``, LF only). Flushing after each of
thousands of token frames costs more than the model's own stream, so frames are gathered and
handed to the transport, then flushed, at once only when a person is waiting on them (the first
frame, the end of a run, a tool call); token deltas go out at most every ``window`` seconds, in
one ``write``. A ``: keep-alive`` comment goes out whenever nothing was written for ``keepalive``
seconds, so proxies and clients do not time out a silent model.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from json.encoder import encode_basestring as _string  # JSON string, non-ASCII kept

from ag_ui.core import BaseEvent, EventType
from ag_ui.encoder import EventEncoder

from .journal import RunJournal

MEDIA_TYPE = "text/event-stream"
KEEPALIVE_FRAME = b": keep-alive\n\n"

# Deltas may wait for the next flush; everything else is something a person waits on.
_BATCHED = frozenset(
    {
        EventType.TEXT_MESSAGE_CONTENT,
        EventType.TOOL_CALL_ARGS,
        EventType.REASONING_MESSAGE_CONTENT,
    }
)

_encoder = EventEncoder()

# Token deltas are nearly every frame of a long answer; their frames are written directly (the
# official encoder's pydantic dump costs ten times as much) and a test holds them byte-equal to
# its output. Only an event with nothing but its id and delta set takes this path.
_FAST_FRAMES = {
    EventType.TEXT_MESSAGE_CONTENT: (
        'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":',
        "message_id",
    ),
    EventType.REASONING_MESSAGE_CONTENT: (
        'data: {"type":"REASONING_MESSAGE_CONTENT","messageId":',
        "message_id",
    ),
    EventType.TOOL_CALL_ARGS: ('data: {"type":"TOOL_CALL_ARGS","toolCallId":', "tool_call_id"),
}


def encode(event: BaseEvent) -> bytes:
    fast = _FAST_FRAMES.get(event.type)
    if fast is not None and not event.__pydantic_extra__:
        fields = event.__dict__
        get = fields.get
        # The optional fields a frame leaves out when unset (each test is cheaper than a loop).
        if (
            get("timestamp") is None
            and get("raw_event") is None
            and get("metadata") is None
            and get("subagent_run_id") is None
        ):
            head, id_field = fast
            frame = f'{head}{_string(fields[id_field])},"delta":{_string(fields["delta"])}}}\n\n'
            return frame.encode("utf-8", "replace")
    return _encoder.encode(event).encode("utf-8", "replace")


def _drop(data: bytes) -> None:
    pass


async def _nothing() -> None:
    pass


class SSEWriter:
    """Writes AG-UI events to a buffered transport (``write`` buffers, ``flush`` sends).

    With a ``journal``, each event's frame is numbered (its SSE ``id:``) and kept there too, so
    a client can re-attach. A ``detachable`` writer whose client goes away (a failed flush, or
    :meth:`detach`) carries on into the journal alone instead of failing the run.
    """

    def __init__(
        self,
        write: Callable[[bytes], None],
        flush: Callable[[], Awaitable[None]],
        *,
        window: float = 0.010,
        keepalive: float = 15.0,
        journal: RunJournal | None = None,
        detachable: bool = False,
    ) -> None:
        self._write = write
        self._flush = flush
        self.window = window
        self.keepalive = keepalive
        self.journal = journal
        self.detachable = detachable
        self.detached = False
        self._last_flush = 0.0
        self._last_write = time.monotonic()
        # Frames not yet handed to the transport: one ``write`` per flush, not one per frame.
        self._pending: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self._pinger: asyncio.Task[None] | None = None
        self._error: BaseException | None = None
        self.bytes_written = 0

    async def __aenter__(self) -> SSEWriter:
        self._pinger = asyncio.create_task(self._keepalive_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pinger is not None:
            self._pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pinger

    def detach(self) -> None:
        """The client is gone: frames go on into the journal only."""
        self.detached = True
        self._write = _drop
        self._flush = _nothing
        self._pending.clear()
        self._error = None

    async def send(self, event: BaseEvent) -> None:
        if self.put(event):
            await self.flush()

    def put(self, event: BaseEvent) -> bool:
        """Frames ``event`` (numbered, with a journal) to go out with the next flush; ``True``
        when it should go out now (:meth:`send` is ``put``, then :meth:`flush` when it says so),
        else a flush is due within the window. The per-token path: no coroutine, one clock
        read."""
        if self._error is not None:
            raise self._error
        frame = encode(event)
        if self.journal is not None:
            frame = self.journal.append(frame)
        self._pending.append(frame)
        self.bytes_written += len(frame)
        self._last_write = now = time.monotonic()
        if event.type not in _BATCHED or now - self._last_flush >= self.window:
            return True
        if self._timer is None:
            delay = self.window - (now - self._last_flush)
            self._timer = asyncio.get_running_loop().call_later(delay, self._deferred_flush)
        return False

    def _emit(self, data: bytes) -> None:
        self._pending.append(data)
        self.bytes_written += len(data)
        self._last_write = time.monotonic()

    def hand_over(self) -> bool:
        """Writes the frames gathered so far into the transport's buffer (without flushing
        it); whether there were any."""
        pending = self._pending
        if not pending:
            return False
        self._write(pending[0] if len(pending) == 1 else b"".join(pending))
        pending.clear()
        return True

    async def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.hand_over():
            return
        self._last_flush = time.monotonic()
        if not self.detachable:
            await self._flush()
            return
        try:
            await self._flush()
        except Exception:  # the client went away: the run goes on without it
            self.detach()

    def _deferred_flush(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        task.add_done_callback(self._note_error)

    def _note_error(self, task: asyncio.Future[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self._error = task.exception()

    async def _keepalive_loop(self) -> None:
        while True:
            idle = time.monotonic() - self._last_write
            if idle >= self.keepalive:
                self._emit(KEEPALIVE_FRAME)
                try:
                    await self.flush()
                except Exception as exc:  # the peer went away; the run loop will notice
                    self._error = exc
                    return
                if self.detached:
                    return
                idle = 0.0
            await asyncio.sleep(self.keepalive - idle)
