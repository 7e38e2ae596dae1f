"""SSE framing: official frames, coalesced flushes, keep-alives."""

from __future__ import annotations

import asyncio

from ag_ui.core import RunStartedEvent, TextMessageContentEvent, TextMessageEndEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from gth_jupyter.runs.sse import KEEPALIVE_FRAME, SSEWriter, encode


class Sink:
    def __init__(self) -> None:
        self.buffer = b""
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.buffer += data

    async def flush(self) -> None:
        if self.buffer:
            self.sent.append(self.buffer)
            self.buffer = b""


def test_frames_are_lf_only_data_lines_without_nulls() -> None:
    frame = encode(TextMessageContentEvent(message_id="m", delta="a\r\nb"))
    assert frame.startswith(b"data: {") and frame.endswith(b"}\n\n")
    assert b"\r" not in frame.replace(b"\\r", b"") and b"null" not in frame
    assert frame.count(b"\n") == 2


def test_a_short_delta_frame_is_small() -> None:
    frame = encode(TextMessageContentEvent(message_id="0" * 36, delta="word"))
    assert len(frame) <= 110


async def test_token_frames_are_coalesced_and_urgent_ones_flushed_at_once() -> None:
    sink = Sink()
    async with SSEWriter(sink.write, sink.flush, window=0.05) as writer:
        await writer.send(RunStartedEvent(thread_id="t", run_id="r"))
        assert len(sink.sent) == 1  # the first frame goes out at once
        for _ in range(100):
            await writer.send(TextMessageContentEvent(message_id="m", delta="x"))
        assert len(sink.sent) == 1  # deltas wait for the window
        await writer.send(TextMessageEndEvent(message_id="m"))
        assert len(sink.sent) == 2 and sink.sent[1].count(b"data: ") == 101


async def test_a_quiet_stream_flushes_pending_deltas_after_the_window() -> None:
    sink = Sink()
    async with SSEWriter(sink.write, sink.flush, window=0.02) as writer:
        await writer.send(RunStartedEvent(thread_id="t", run_id="r"))
        await writer.send(TextMessageContentEvent(message_id="m", delta="late"))
        await asyncio.sleep(0.08)
        assert b"late" in b"".join(sink.sent)


async def test_keepalive_comments_while_silent() -> None:
    sink = Sink()
    async with SSEWriter(sink.write, sink.flush, keepalive=0.03):
        await asyncio.sleep(0.1)
    assert KEEPALIVE_FRAME in sink.sent


TRICKY = [
    "tok ",
    "",
    "é ü 中文 😀",
    '"quoted" \\ back',
    "\n\r\t\x00\x1f",
    "\u2028\u2029",
    "</script>",
]


def test_fast_delta_frames_match_the_official_encoder_byte_for_byte() -> None:
    from ag_ui.core import ReasoningMessageContentEvent, ToolCallArgsEvent
    from ag_ui.encoder import EventEncoder

    official = EventEncoder()
    for delta in TRICKY:
        for event in (
            TextMessageContentEvent(message_id="m-1", delta=delta),
            ReasoningMessageContentEvent(message_id="r-1", delta=delta),
            ToolCallArgsEvent(tool_call_id="c-1", delta=delta),
        ):
            assert encode(event) == official.encode(event).encode("utf-8"), (event.type, delta)
    with_timestamp = TextMessageContentEvent(message_id="m", delta="x", timestamp=5)
    assert b'"timestamp":5' in encode(with_timestamp)


@settings(max_examples=300, deadline=None)
@given(
    delta=st.text(st.characters(blacklist_categories=("Cs",))),
    ident=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1),
)
def test_fast_delta_frames_equal_the_official_encoder_for_any_text(delta: str, ident: str) -> None:
    from ag_ui.core import ToolCallArgsEvent
    from ag_ui.encoder import EventEncoder

    official = EventEncoder()
    for event in (
        TextMessageContentEvent(message_id=ident, delta=delta),
        ToolCallArgsEvent(tool_call_id=ident, delta=delta),
    ):
        assert encode(event) == official.encode(event).encode("utf-8")


async def test_frames_reach_the_transport_in_one_write_per_flush() -> None:
    writes: list[bytes] = []
    flushes = 0

    async def flush() -> None:
        nonlocal flushes
        flushes += 1

    async with SSEWriter(writes.append, flush, window=60) as writer:
        await writer.send(RunStartedEvent(thread_id="t", run_id="r"))
        for i in range(50):
            assert not writer.put(TextMessageContentEvent(message_id="m", delta=str(i)))
        assert len(writes) == 1  # the deltas wait, and not in the transport's buffer either
        await writer.send(TextMessageEndEvent(message_id="m"))
    assert len(writes) == 2 and flushes == 2
    assert writes[1].count(b"TEXT_MESSAGE_CONTENT") == 50 and writes[1].endswith(b"}\n\n")
    assert writer.bytes_written == len(b"".join(writes))
