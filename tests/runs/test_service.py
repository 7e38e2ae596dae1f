"""The run service: a run streamed into its transport and its journal, followed after the
client's last id with keep-alives, stopped where it streams, and refused where it cannot be."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from gth_jupyter.agui import ProtocolError, ThreadRun, parse_request
from gth_jupyter.contract.run import RunEnd
from gth_jupyter.runs import LocalJournals, RunInfo, RunJournal, RunService, Transport
from tests.conftest import RuntimeFactory, body


class Sink:
    """A transport that keeps what it is sent; ``written`` is set by each write."""

    def __init__(self) -> None:
        self.data = b""
        self.written = asyncio.Event()

    def write(self, data: bytes) -> None:
        self.data += data
        self.written.set()

    async def wait(self, enough: Callable[[bytes], bool]) -> None:
        while not enough(self.data):
            self.written.clear()
            await self.written.wait()

    async def flush(self) -> None:
        pass


async def test_a_run_streams_into_its_transport_and_a_follower_gets_the_same_frames(
    make_runtime: RuntimeFactory,
) -> None:
    runs = RunService()
    request = parse_request(body("t1", "r1", [{"id": "u1", "role": "user", "content": "hi"}]))
    sink = Sink()
    transport = Transport(sink.write, sink.flush, run_key="r1", owner="alice")
    await runs.start(make_runtime(["Hello there"]), request, transport)
    assert b"TEXT_MESSAGE_CONTENT" in sink.data and b"RUN_FINISHED" in sink.data
    assert runs.running == {}
    found = await runs.find("r1", "r1")
    assert found == RunInfo("r1", "t1", "alice", True)
    again = Sink()
    await (await runs.follow("r1", "r1", 0)).run(again.write, again.flush)
    assert again.data == sink.data  # the journal holds every frame, with its id
    rest = Sink()
    await (await runs.follow("r1", "r1", 1)).run(rest.write, rest.flush)
    assert rest.data and sink.data.endswith(rest.data) and rest.data != sink.data


async def test_stopping_a_run_streaming_here_ends_it_with_run_cancelled(
    make_runtime: RuntimeFactory,
) -> None:
    runs = RunService()
    # Paced like a model (a frame reaches the transport only when the writer flushes), so the
    # run is still going when it is stopped.
    runtime = make_runtime([{"content": "one two three " * 200, "delayMs": 5}])
    request = parse_request(body("t1", "r1", [{"id": "u1", "role": "user", "content": "hi"}]))
    sink = Sink()
    transport = Transport(sink.write, sink.flush, run_key="r1", owner="alice")
    streaming = asyncio.ensure_future(runs.start(runtime, request, transport))
    await sink.wait(lambda data: b"TEXT_MESSAGE_CONTENT" in data)  # streaming, registered
    assert runs.running["r1"].owner == "alice"
    with pytest.raises(ProtocolError) as other:
        await runs.cancel("bob", "r1", "r1")  # not bob's: unknown to him
    assert other.value.code == "run_not_found"
    await runs.cancel("alice", "r1", "r1")
    await streaming
    assert b"run_cancelled" in sink.data
    await runs.cancel("alice", "r1", "r1")  # ended already: nothing to do, no refusal


class Elsewhere(LocalJournals):
    """Journals that know of a run going on in another server process."""

    async def find(self, run_id: str) -> RunInfo | None:
        return RunInfo(run_id, "t1", "alice", ended=False) if run_id == "far" else None

    async def follow(self, run_id: str, last_id: int) -> AsyncIterator[list[bytes]]:
        raise ConnectionError("Redis away")
        yield []  # pragma: no cover  (an async generator)


async def test_a_run_of_another_process_is_run_elsewhere_and_an_unreadable_one_refused() -> None:
    runs = RunService(Elsewhere())
    with pytest.raises(ProtocolError) as elsewhere:
        await runs.cancel("alice", "far", "far")
    assert (elsewhere.value.status, elsewhere.value.code) == (409, "run_elsewhere")
    with pytest.raises(ProtocolError) as unknown:
        await runs.cancel("alice", "near", "near")
    assert unknown.value.code == "run_not_found"
    with pytest.raises(ProtocolError) as unreadable:
        await runs.follow("far", "far", 0)
    assert (unreadable.value.status, unreadable.value.code) == (503, "journal_unavailable")


async def test_frames_no_longer_kept_are_events_expired() -> None:
    journals = LocalJournals()
    runs = RunService(journals)
    journal: RunJournal = journals.open("r1", "t1", "alice")
    for n in range(3):  # past what one run's journal keeps (equal frames would be kept once)
        journal.append(b"data: " + bytes([65 + n]) * 10 * 1024 * 1024 + b"\n\n")
    journal.end()
    with pytest.raises(ProtocolError) as expired:
        await runs.follow("r1", "r1", 0)
    assert (expired.value.status, expired.value.code) == (410, "events_expired")


async def test_a_quiet_run_gets_keep_alives_while_it_is_followed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gth_jupyter.runs import service

    monkeypatch.setattr(service, "KEEPALIVE_SECONDS", 0.01)
    journals = LocalJournals()
    runs = RunService(journals)
    journal = journals.open("r1", "t1", "alice")
    journal.append(b"data: {}\n\n")
    sink = Sink()
    relay = asyncio.ensure_future((await runs.follow("r1", "r1", 0)).run(sink.write, sink.flush))
    await sink.wait(lambda data: data.count(service.KEEPALIVE_FRAME) >= 3)
    journal.end()
    await relay
    assert service.KEEPALIVE_FRAME in sink.data


async def test_a_cancelled_pump_still_hands_the_transport_every_frame_it_journaled(
    make_runtime: RuntimeFactory,
) -> None:
    from gth_jupyter.runs import SSEPump

    run = ThreadRun(
        make_runtime([{"content": "one two three " * 50, "delayMs": 2}]),
        parse_request(body("t1", "r1", [{"id": "u1", "role": "user", "content": "hi"}])),
    )
    await run.plan()
    journal = RunJournal("r1", "t1", "alice")
    sink = Sink()
    flushed: list[int] = []

    async def flush() -> None:
        flushed.append(len(sink.data))

    # A window longer than the test: the deltas wait in the writer until the pump ends.
    pump = SSEPump(run.events(), sink.write, flush, window=60, journal=journal)
    task = asyncio.ensure_future(pump.run())
    while journal.last_id < 10:  # the run is streaming deltas
        await journal.wait(journal.last_id)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert b"RUN_FINISHED" not in sink.data and b"TEXT_MESSAGE_CONTENT" in sink.data
    assert sink.data == b"".join(journal.after(0))  # nothing journaled was held back
    assert flushed[-1] == len(sink.data)  # and the transport was flushed after it


HELLO = [{"id": "u1", "role": "user", "content": "hi"}]
#: A resume answering nothing: the thread is claimed, then the plan refuses it.
NOTHING_WAITS = {"resume": [{"interruptId": "i-1", "status": "resolved"}]}


@pytest.mark.parametrize("ending", ["refused", "cancelled", "finished"])
@pytest.mark.parametrize("way", ["http", "comm", "reader"])
async def test_however_a_run_ends_its_thread_is_free_again(
    make_runtime: RuntimeFactory, way: str, ending: str
) -> None:
    """One owner lets the thread go, for each way a run starts: journaled (HTTP), streamed
    with no journal (the widget's comm) and read in this process (``Session``, headless)."""
    runs = RunService()
    first = {"content": "one two three " * 200, "delayMs": 5} if ending == "cancelled" else "Hi."
    runtime = make_runtime([first, "Next."])
    extra = NOTHING_WAITS if ending == "refused" else {}
    request = parse_request(body("t1", "r1", HELLO, **extra))
    sink = Sink()
    opened: list[bool] = []
    read: list[Any] = []

    def reader(item: Any) -> None:
        read.append(item)
        sink.write(b"TEXT_MESSAGE_CONTENT")  # something streamed

    to: Any = reader
    if way != "reader":
        key = "r1" if way == "http" else None
        to = Transport(sink.write, sink.flush, lambda: opened.append(True), run_key=key)
    starting = asyncio.ensure_future(runs.start(runtime, request, to))
    if ending == "refused":
        with pytest.raises(ProtocolError) as refused:
            await starting
        assert refused.value.code == "no_pending_interrupt"
        assert sink.data == b"" and not opened and not read  # nothing streamed
    elif ending == "cancelled":
        await sink.wait(lambda data: b"TEXT_MESSAGE_CONTENT" in data)
        if way == "http":
            runs.leave("r1")  # the client went away
            await starting
        else:
            starting.cancel()  # the comm's abort; a cell interrupted
            with pytest.raises(asyncio.CancelledError):
                await starting
        assert b"RUN_FINISHED" not in sink.data and not any(isinstance(i, RunEnd) for i in read)
    else:
        await starting
        assert isinstance(read[-1], RunEnd) if way == "reader" else b"RUN_FINISHED" in sink.data
    assert await runtime.running("t1") is None  # no claim left behind, here or in its lease
    again = parse_request(body("t1", "r2", [{"id": "u2", "role": "user", "content": "again"}]))
    await runs.start(runtime, again, lambda item: None)  # the next run is not run_busy


async def test_a_busy_thread_is_refused_at_once_unless_the_host_waits(
    make_runtime: RuntimeFactory,
) -> None:
    runs = RunService()
    runtime = make_runtime(["Done."])
    request = parse_request(body("t1", "r1", HELLO))
    held = await runtime.claim("t1", "elsewhere")  # another run holds the thread
    with pytest.raises(ProtocolError) as busy:
        await runs.start(runtime, request, lambda item: None)
    assert (busy.value.status, busy.value.code) == (409, "run_busy")
    asked: list[bool] = []

    async def give_up() -> bool:
        asked.append(False)
        return False

    with pytest.raises(ProtocolError) as still:
        await runs.start(runtime, request, lambda item: None, retry=give_up)
    assert still.value.code == "run_busy" and asked == [False]

    async def wait_for_it() -> bool:
        asked.append(True)
        held.release()  # the other run ends while this one waits
        return True

    read: list[Any] = []
    await runs.start(runtime, request, read.append, retry=wait_for_it)
    assert asked == [False, True] and isinstance(read[-1], RunEnd)
    assert await runtime.running("t1") is None
