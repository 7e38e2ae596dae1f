"""Streaming overhead: our AG-UI endpoint and the official adapter against the bare graph stream.

One scripted answer of N tokens (``"tok "`` x N) streams through the same agent graph three ways:

- **bare**: ``graph.astream(..., stream_mode="messages")`` in process, every chunk consumed;
- **ours**: ``gth-jupyter serve`` in a subprocess, one POST per run on loopback, read to the last
  byte of the SSE body;
- **official**: ``ag_ui_langgraph.LangGraphAgent(...).run()`` in process, each event encoded with
  ``ag_ui.encoder.EventEncoder`` (its defaults, then ``emit_raw_events=False``);

plus a diagnostic fourth, **ours in process** (our request parsing, runtime, mapping and SSE
encoding without HTTP), which splits ours' overhead into pipeline and transport.

It also measures the resume latency of a client tool round trip (``capture_image``): the time
from posting the resume run, with the history an AG-UI client sends, to its first
``TEXT_MESSAGE_CONTENT`` frame. Run from the repository root::

    .venv/bin/python bench/stream_overhead.py            # 5000 tokens, 1 warm-up + 5 timed
    .venv/bin/python bench/stream_overhead.py --quick    # CI smoke: 1000 tokens, 2 timed

Results are printed and saved to ``bench/results/stream_overhead.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import importlib.metadata
import inspect
import json
import os
import platform
import pstats
import re
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
from ag_ui.core import RunAgentInput, UserMessage
from ag_ui.encoder import EventEncoder
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from gth_jupyter.agent.graph import AgentGraph, build_graph
from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.agui.request import parse_request
from gth_jupyter.agui.run import ThreadRun
from gth_jupyter.models import FakeChatModel
from gth_jupyter.runs.sse import encode

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "stream_overhead.json"
READY_PREFIX = "gth-jupyter AG-UI server on http://"
SERVER_START_TIMEOUT = 30.0
CONTENT_MARKER = b'"type":"TEXT_MESSAGE_CONTENT"'
PROMPT = "Please stream a long answer."

# Targets: the stream budget (the server's CPU per run over the bare stream's, paired run by
# run: the shared machine disturbs CPU time less than wall time), and the frame size from
# design.md.
TARGET_CPU_RATIO = 1.1
TARGET_FRAME_BYTES = 110

CAPTURE_IMAGE_TOOL: dict[str, Any] = {
    "name": "capture_image",
    "description": "webcam",
    "parameters": {"type": "object", "properties": {}},
}
TOOL_CALL_RESPONSE: dict[str, Any] = {
    "content": "",
    "toolCalls": [{"name": "capture_image", "args": {}}],
}
TOOL_ANSWER_RESPONSE = "I see a person at a desk with a mug of coffee."
# A stand-in for a small webcam JPEG (the fake model does not look at it).
IMAGE_BYTES = 24 * 1024

LIBRARIES = (
    "langgraph",
    "langchain",
    "langchain-core",
    "ag-ui-protocol",
    "ag-ui-langgraph",
    "pydantic",
    "tornado",
    "httpx",
    "gth-jupyter",
)


@dataclass
class Settings:
    tokens: int
    repeat: int
    warmup: int
    resume_repeat: int
    check: bool
    profile_server: Path | None
    server_gc_freeze: bool


@dataclass
class Row:
    """One way of streaming: timed repetitions plus what the stream carried."""

    name: str
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    body_bytes: int | None = None
    events: int | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu_mean(self) -> float | None:
        """CPU seconds per run, averaged."""
        return statistics.fmean(self.cpu) if self.cpu else None


@dataclass
class ResumeResult:
    first_content: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    image_bytes: int = 0


class BenchError(RuntimeError):
    """A measurement could not be taken; the message says why."""


# -- helpers --------------------------------------------------------------------------------


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid4().hex[:12]}"


def script_text(tokens: int) -> str:
    return "tok " * tokens


def make_graph(text: str, responses: int) -> AgentGraph:
    """The agent graph as our runtime builds it, on a scripted model with enough answers."""
    model = FakeChatModel(responses=[text] * responses, tokenDelayMs=0)
    return build_graph(model, [], [], checkpointer=InMemorySaver())


def frames_of(body: bytes) -> list[bytes]:
    """The SSE frames of a body, each with its ``data: `` prefix and trailing blank line."""
    return [part + b"\n\n" for part in body.split(b"\n\n") if part]


def events_of(body: bytes) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for frame in frames_of(body):
        for line in frame.splitlines():
            if line.startswith(b"data:"):
                events.append(json.loads(line[5:]))
    return events


def process_cpu_seconds(pid: int) -> float | None:
    """CPU time of a process, all its threads (Linux ``/proc``; else ``None``).

    From the scheduler's nanosecond count of each thread (``/proc/PID/task/*/schedstat``) when
    the kernel keeps it, else from ``/proc/PID/stat``'s user + system clock ticks (10 ms each:
    a run of ~0.1 s could only be told apart by +-10%). A thread that ends between two readings
    would drop out of the count; the server's (its event loop's and an executor's) live as long
    as it does."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
        return sum(int((t / "schedstat").read_text().split()[0]) for t in tasks) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # fields[0] is field 3 (state) of proc(5)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def library_versions() -> dict[str, str]:
    versions: dict[str, str] = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> list[float] | None:
    """1, 5 and 15 minute load averages: other work on the machine skews every figure."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine() -> dict[str, Any]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
    }


# -- the server, over HTTP ------------------------------------------------------------------------


@dataclass
class Server:
    url: str
    token: str
    process: asyncio.subprocess.Process
    log: deque[str]


# ``--server-gc-freeze``: the server's import-time objects leave the collector's view, an
# experiment on full collections during long streams (see bench/README.md).
_FROZEN_SERVER = (
    "import gc, sys; from gth_jupyter.server.cli import main; gc.freeze(); "
    "sys.exit(main(sys.argv[1:]))"
)


def server_command(config: Path, port: int, token: str, s: Settings) -> list[str]:
    args = ["serve", "--memory", "--port", str(port), "--token", token, "-c", str(config)]
    if s.profile_server is not None:
        prefix = [sys.executable, "-m", "cProfile", "-o", str(s.profile_server)]
        return [*prefix, "-m", "gth_jupyter.server.cli", *args]
    if s.server_gc_freeze:
        return [sys.executable, "-c", _FROZEN_SERVER, *args]
    script = Path(sys.executable).with_name("gth-jupyter")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "gth_jupyter.server.cli", *args]


async def _drain(stream: asyncio.StreamReader | None, log: deque[str]) -> None:
    if stream is None:
        return
    async for line in stream:
        log.append(line.decode(errors="replace").rstrip())


async def _wait_ready(
    process: asyncio.subprocess.Process, log: deque[str], prefix: str = READY_PREFIX
) -> str:
    """The URL of the server's ready line (the first line starting ``prefix``); the lines
    before it go to ``log``."""
    assert process.stdout is not None
    while True:
        line = (await process.stdout.readline()).decode(errors="replace")
        if not line:  # EOF: the server exited
            await process.wait()
            raise BenchError(
                f"The server exited with code {process.returncode} before it was ready:\n"
                + "\n".join(log)
            )
        log.append(line.rstrip())
        if line.startswith(prefix):
            found = re.search(r"http://\S+", line)
            assert found is not None
            return found.group(0)


@contextlib.asynccontextmanager
async def running_server(config: dict[str, Any], s: Settings) -> AsyncIterator[Server]:
    """``gth-jupyter serve`` in a temporary directory; always stopped on the way out."""
    token = uuid4().hex
    with tempfile.TemporaryDirectory(prefix="gth-bench-") as tmp:
        config_path = Path(tmp) / "bench.gsloth.config.json"
        config_path.write_text(json.dumps(config), encoding="utf-8")
        command = server_command(config_path, free_port(), token, s)
        log: deque[str] = deque(maxlen=40)
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=tmp,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        drains = [asyncio.ensure_future(_drain(process.stderr, log))]
        try:
            try:
                url = await asyncio.wait_for(_wait_ready(process, log), SERVER_START_TIMEOUT)
            except asyncio.TimeoutError:
                raise BenchError(
                    f"The server did not start within {SERVER_START_TIMEOUT:.0f} s "
                    f"(no line starting {READY_PREFIX!r}). Command: {' '.join(command)}\n"
                    + "\n".join(log)
                ) from None
            drains.append(asyncio.ensure_future(_drain(process.stdout, log)))
            yield Server(url, token, process, log)
        finally:
            await _stop(process)
            for task in drains:
                task.cancel()
            await asyncio.gather(*drains, return_exceptions=True)


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), 15)
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def run_body(
    thread_id: str,
    messages: list[dict[str, Any]],
    tools: Sequence[dict[str, Any]] = (),
) -> bytes:
    """A ``RunAgentInput`` as ``@ag-ui/client``'s HttpAgent sends it."""
    body = {
        "threadId": thread_id,
        "runId": new_id("run"),
        "protocolVersion": "1.0",  # HttpAgent 1.0 sends it; without it the 0.x dialect answers
        "messages": messages,
        "tools": list(tools),
        "context": [],
        "forwardedProps": {},
        "state": {},
    }
    return json.dumps(body).encode("utf-8")


@dataclass
class Timed:
    body: bytes
    total: float
    first_content: float | None


async def post_run(client: httpx.AsyncClient, server: Server, body: bytes) -> Timed:
    """POSTs a run and reads its SSE body to the last byte, noting the first content frame."""
    headers = {
        "Authorization": f"token {server.token}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
    }
    url = f"{server.url}/agents/default/run"
    parts: list[bytes] = []
    first: float | None = None
    tail = b""
    start = time.perf_counter()
    async with client.stream("POST", url, content=body, headers=headers) as response:
        if response.status_code != 200:
            detail = (await response.aread()).decode(errors="replace")
            raise BenchError(f"POST {url} answered {response.status_code}: {detail}")
        async for chunk in response.aiter_raw():
            if first is None:
                if CONTENT_MARKER in tail + chunk:
                    first = time.perf_counter() - start
                tail = chunk[-len(CONTENT_MARKER) :]
            parts.append(chunk)
    total = time.perf_counter() - start
    return Timed(b"".join(parts), total, first)


def check_text_run(body: bytes, tokens: int, label: str) -> list[bytes]:
    """The run's content frames, after checking it streamed every token and finished."""
    frames = frames_of(body)
    content = [f for f in frames if CONTENT_MARKER in f]
    last = events_of(frames[-1]) if frames else []
    if not last or last[0].get("type") != "RUN_FINISHED":
        raise BenchError(f"{label}: the stream did not end with RUN_FINISHED: {frames[-1:]!r}")
    if len(content) != tokens:
        raise BenchError(f"{label}: expected {tokens} content frames, got {len(content)}")
    return content


def capture_image_answer() -> str:
    data = base64.b64encode(os.urandom(IMAGE_BYTES)).decode("ascii")
    return json.dumps({"mimeType": "image/jpeg", "data": data})


async def bench_resume(s: Settings, server: Server, client: httpx.AsyncClient) -> ResumeResult:
    result = ResumeResult()
    answer = capture_image_answer()
    result.image_bytes = len(answer)
    tools = [CAPTURE_IMAGE_TOOL]
    for rep in range(s.warmup + s.resume_repeat):
        thread_id = new_id("resume")
        user = {"id": new_id("user"), "role": "user", "content": "Take a photo."}
        first = await post_run(client, server, run_body(thread_id, [user], tools))
        events = events_of(first.body)
        start = next((e for e in events if e["type"] == "TOOL_CALL_START"), None)
        finished = events[-1] if events else {}
        if start is None or finished.get("type") != "RUN_FINISHED":
            raise BenchError(f"resume: run 1 made no tool call or did not finish: {events!r}")
        call_id: str = start["toolCallId"]
        text_start = next((e for e in events if e["type"] == "TEXT_MESSAGE_START"), None)
        assistant_id = start.get("parentMessageId") or (text_start or {}).get("messageId")
        pending = (finished.get("outcome") or {}).get("pendingToolCallIds") or []
        if call_id not in pending or not assistant_id:
            raise BenchError(f"resume: run 1 did not leave {call_id} pending: {finished!r}")
        assistant = {
            "id": assistant_id,
            "role": "assistant",
            "toolCalls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "capture_image", "arguments": "{}"},
                }
            ],
        }
        tool = {"id": new_id("tool"), "role": "tool", "toolCallId": call_id, "content": answer}
        resumed = await post_run(
            client, server, run_body(thread_id, [user, assistant, tool], tools)
        )
        if resumed.first_content is None:
            raise BenchError(f"resume: no TEXT_MESSAGE_CONTENT after resuming: {resumed.body!r}")
        if rep >= s.warmup:
            result.first_content.append(resumed.first_content)
            result.total.append(resumed.total)
    return result


# -- the three ways --------------------------------------------------------------------------


@dataclass
class Sample:
    """One timed run of one way."""

    seconds: float
    events: int
    cpu: float | None
    body_bytes: int | None = None
    content_frame: bytes | None = None


@dataclass
class Way:
    name: str
    once: Callable[[], Awaitable[Sample]]


def bare_way(s: Settings, text: str) -> Way:
    graph = make_graph(text, s.warmup + s.repeat)

    async def once() -> Sample:
        config: Any = {"configurable": {"thread_id": new_id("bare")}}
        chunks = 0
        cpu = time.process_time()
        start = time.perf_counter()
        async for _chunk in graph.astream(
            {"messages": [HumanMessage(PROMPT)]}, config, stream_mode="messages"
        ):
            chunks += 1
        elapsed = time.perf_counter() - start
        if chunks < s.tokens:
            raise BenchError(f"bare: expected at least {s.tokens} chunks, got {chunks}")
        return Sample(elapsed, chunks, time.process_time() - cpu)

    return Way("bare: graph.astream(messages)", once)


def ours_way(s: Settings, server: Server, client: httpx.AsyncClient) -> Way:
    async def once() -> Sample:
        user = {"id": new_id("user"), "role": "user", "content": PROMPT}
        body = run_body(new_id("ours"), [user])
        cpu = process_cpu_seconds(server.process.pid)
        timed = await post_run(client, server, body)
        cpu_after = process_cpu_seconds(server.process.pid)
        used = cpu_after - cpu if cpu is not None and cpu_after is not None else None
        content = check_text_run(timed.body, s.tokens, "ours")
        frame = content[min(99, len(content) - 1)]
        return Sample(timed.total, len(frames_of(timed.body)), used, len(timed.body), frame)

    return Way("ours: gth-jupyter serve, HTTP", once)


def ours_in_process_way(s: Settings, text: str) -> Way:
    """Our pipeline without HTTP: request parsing, Runtime, AG-UI mapping and SSE encoding.

    Not one of the three ways asked for: it splits ours' overhead into pipeline and transport,
    and it is what compares like for like with the official adapter, which also runs in process.
    """
    model = FakeChatModel(responses=[text] * (s.warmup + s.repeat), tokenDelayMs=0)
    runtime = Runtime(model, [], checkpointer=InMemorySaver())

    async def once() -> Sample:
        user = {"id": new_id("user"), "role": "user", "content": PROMPT}
        body = run_body(new_id("inproc"), [user])
        size = events = content = 0
        cpu = time.process_time()
        start = time.perf_counter()
        run = ThreadRun(runtime, parse_request(body))
        await run.plan()
        async with contextlib.aclosing(run.events()) as stream:
            async for event in stream:
                size += len(encode(event))
                events += 1
                content += event.type == "TEXT_MESSAGE_CONTENT"
        elapsed = time.perf_counter() - start
        if content != s.tokens:
            raise BenchError(f"ours in process: expected {s.tokens} content events, got {content}")
        return Sample(elapsed, events, time.process_time() - cpu, size)

    return Way("ours in process (diagnostic)", once)


def official_way(s: Settings, text: str, emit_raw_events: bool | None) -> Way | None:
    """The official adapter in process; ``emit_raw_events=None`` keeps its defaults.

    ``None`` when the installed adapter has no ``emit_raw_events`` flag.
    """
    try:
        from ag_ui_langgraph import LangGraphAgent
    except ImportError as exc:
        raise BenchError(
            f"The official adapter is not importable ({exc}); install the test extra: "
            "uv pip install -e '.[test]' (ag-ui-langgraph and fastapi)."
        ) from None
    kwargs: dict[str, Any] = {}
    name = "official: ag_ui_langgraph defaults"
    if emit_raw_events is not None:
        if "emit_raw_events" not in inspect.signature(LangGraphAgent.__init__).parameters:
            return None
        kwargs["emit_raw_events"] = emit_raw_events
        name = f"official: emit_raw_events={emit_raw_events}"
    graph = make_graph(text, s.warmup + s.repeat)
    # The adapter passes ``config.configurable`` (thread_id, ...) as the runtime context, which
    # our dataclass context schema rejects; with no schema, RunContextMiddleware is a no-op.
    graph.context_schema = None
    agent = LangGraphAgent(name="bench", graph=graph, **kwargs)
    encoder = EventEncoder()

    async def once() -> Sample:
        request = RunAgentInput(
            thread_id=new_id("official"),
            run_id=new_id("run"),
            messages=[UserMessage(id=new_id("user"), role="user", content=PROMPT)],
            state={},
            tools=[],
            context=[],
            forwarded_props={},
        )
        size = events = content = 0
        last_type = ""
        cpu = time.process_time()
        start = time.perf_counter()
        async for event in agent.clone().run(request):  # the FastAPI endpoint clones per request
            size += len(encoder.encode(event).encode("utf-8"))
            events += 1
            last_type = event.type
            if last_type == "TEXT_MESSAGE_CONTENT":
                content += 1
        elapsed = time.perf_counter() - start
        if last_type != "RUN_FINISHED" or content != s.tokens:
            raise BenchError(
                f"{name}: expected {s.tokens} content events and RUN_FINISHED last, got "
                f"{content} and {last_type}"
            )
        return Sample(elapsed, events, time.process_time() - cpu, size)

    return Way(name, once)


async def measure(s: Settings, ways: Sequence[Way]) -> tuple[list[Row], bytes]:
    """Warms every way up, then runs them in turn (rotating who goes first) ``repeat`` times,
    so that a change in machine load touches every way alike.

    No way gets a ``gc.collect()`` before its run: the server cannot get one, and a full
    collection falling inside a 5,000-token stream costs tens of milliseconds, so collecting in
    process only would flatter the in-process ways (the bench freezes its own start-up objects
    instead; see ``run``).
    """
    rows = {way.name: Row(way.name) for way in ways}
    frame = b""
    for way in ways:
        for _ in range(s.warmup):
            print(f"  warm-up: {way.name}", flush=True)
            await way.once()
    for rep in range(s.repeat):
        print(f"  timed run {rep + 1}/{s.repeat}", flush=True)
        for i in range(len(ways)):
            way = ways[(rep + i) % len(ways)]
            sample = await way.once()
            row = rows[way.name]
            row.times.append(sample.seconds)
            if sample.cpu is not None:
                row.cpu.append(sample.cpu)
            row.events, row.body_bytes = sample.events, sample.body_bytes
            frame = sample.content_frame or frame
    return [rows[way.name] for way in ways], frame


# -- report ----------------------------------------------------------------------------------


def paired_cpu_ratios(bare: Row, ours: Row) -> list[float]:
    """Ours' server CPU over bare's, timed run by timed run (each pair ran back to back)."""
    return [o / b for b, o in zip(bare.cpu, ours.cpu, strict=False) if b > 0]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def report(
    s: Settings,
    rows: list[Row],
    sample_frame: bytes,
    resume: ResumeResult,
    info: dict[str, Any],
) -> dict[str, Any]:
    bare, ours = rows[0], rows[1]
    print()
    print(
        f"Streaming {s.tokens} tokens, median of {s.repeat} timed runs "
        f"(+{s.warmup} warm-up) per way"
        + (" [server: gc.freeze() after imports]" if s.server_gc_freeze else "")
    )
    header = (
        f"{'way':<40}{'median s':>9}{'x bare':>8}{'x ours':>8}"
        f"{'CPU s':>8}{'x bare':>8}{'B/token':>9}{'events':>7}"
    )
    print(header)
    print("-" * len(header))
    bare_cpu = bare.cpu_mean
    for row in rows:
        per_token = f"{row.body_bytes / s.tokens:.1f}" if row.body_bytes is not None else "-"
        cpu = row.cpu_mean
        cpu_text = f"{cpu:.3f}" if cpu is not None else "-"
        cpu_ratio = f"{cpu / bare_cpu:.2f}x" if cpu is not None and bare_cpu else "-"
        print(
            f"{row.name:<40}{row.median:>9.3f}{row.median / bare.median:>7.2f}x"
            f"{row.median / ours.median:>7.2f}x{cpu_text:>8}{cpu_ratio:>8}"
            f"{per_token:>9}{row.events or 0:>7}"
        )
    print(
        "x ours: against ours over HTTP. CPU s: mean CPU per run, of the bench process for the "
        "in-process ways\nand of the server process for ours (not the HTTP client). events: "
        "LangGraph chunks for bare, AG-UI events else."
    )
    print()
    ratio = ours.median / bare.median
    pairs = paired_cpu_ratios(bare, ours)
    cpu_ratio = statistics.median(pairs) if pairs else float("nan")
    cpu_ok = bool(pairs) and cpu_ratio <= TARGET_CPU_RATIO
    frame_ok = len(sample_frame) <= TARGET_FRAME_BYTES
    print("Targets")
    checks = [
        (
            f"server CPU <= {TARGET_CPU_RATIO}x bare (paired)",
            f"{cpu_ratio:.2f}x",
            cpu_ok,
        ),
        (
            f"TEXT_MESSAGE_CONTENT frame <= {TARGET_FRAME_BYTES} B",
            f"{len(sample_frame)} B",
            frame_ok,
        ),
    ]
    for label, value, ok in checks:
        print(f"  {label:<40}{value:>8}  {verdict(ok)}")
    print(
        "    paired: ours' server CPU over bare's in the same timed run, median of "
        + ", ".join(f"{r:.2f}" for r in pairs)
    )
    print(f"  {'(info) ours (HTTP) wall time / bare':<40}{ratio:>7.2f}x  load-sensitive")
    print(f"    frame #{min(100, s.tokens)} of ours: {sample_frame!r}")
    print()
    resume_median = statistics.median(resume.first_content)
    print(
        "Resume latency (capture_image answered, request to first TEXT_MESSAGE_CONTENT): "
        f"median {ms(resume_median)} over {len(resume.first_content)} "
        f"(min {ms(min(resume.first_content))}, max {ms(max(resume.first_content))}; "
        f"whole resume run {ms(statistics.median(resume.total))}; "
        f"tool message content {resume.image_bytes} B)"
    )
    print()
    m, v = info["machine"], info["versions"]
    print(
        f"Machine: {m['cpu_count']} CPUs ({m['cpus_usable']} usable), {m['cpu']}; "
        f"{m['implementation']} {m['python']} on {m['platform']}"
    )
    load = info["load_average"]
    if load["start"] is not None and load["end"] is not None:
        print(f"Load average (1/5/15 min): {load['start']} at start, {load['end']} at end")
    print("Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()))

    targets = {
        "server_cpu_over_bare": {
            "value": cpu_ratio,
            "pairs": pairs,
            "limit": TARGET_CPU_RATIO,
            "pass": cpu_ok,
        },
        "ours_over_bare_wall": {"value": ratio, "pass": True},
        "content_frame_bytes": {
            "value": len(sample_frame),
            "limit": TARGET_FRAME_BYTES,
            "pass": frame_ok,
        },
    }
    return {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in asdict(s).items()},
        "rows": [
            {
                **asdict(row),
                "median": row.median,
                "cpu_mean": row.cpu_mean,
                "over_bare": row.median / bare.median,
                "over_ours": row.median / ours.median,
                "bytes_per_token": (row.body_bytes / s.tokens) if row.body_bytes else None,
            }
            for row in rows
        ],
        "content_frame": sample_frame.decode("utf-8"),
        "content_frame_bytes": len(sample_frame),
        "resume": {**asdict(resume), "first_content_median": resume_median},
        "targets": targets,
        **info,
    }


def print_profile(path: Path, limit: int = 25) -> None:
    if not path.exists():
        print(f"\nNo server profile was written to {path}.")
        return
    print(f"\nServer profile ({path}), top {limit} by own time:")
    stats = pstats.Stats(str(path))
    stats.sort_stats("tottime").print_stats(limit)
    print(f"Inspect further: {sys.executable} -m pstats {path}")


# -- main ------------------------------------------------------------------------------------


def server_config(s: Settings, text: str) -> dict[str, Any]:
    """One script for the whole run: the long answers first, then the tool round trips."""
    throughput: list[Any] = [text] * (s.warmup + s.repeat)
    round_trips: list[Any] = [TOOL_CALL_RESPONSE, TOOL_ANSWER_RESPONSE] * (
        s.warmup + s.resume_repeat
    )
    return {"llm": {"type": "fake", "responses": throughput + round_trips}, "builtInTools": []}


async def run(s: Settings) -> dict[str, Any]:
    text = script_text(s.tokens)
    info: dict[str, Any] = {"machine": machine(), "versions": library_versions()}
    load_start = load_average()
    print(
        f"stream_overhead: {s.tokens} tokens, {s.warmup} warm-up + {s.repeat} timed runs per way, "
        f"{s.resume_repeat} resume round trips"
    )
    async with (
        running_server(server_config(s, text), s) as server,
        httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as client,
    ):
        print(f"  server ready at {server.url}", flush=True)
        ways = [bare_way(s, text), ours_way(s, server, client), ours_in_process_way(s, text)]
        ways += [w for w in (official_way(s, text, r) for r in (None, False)) if w is not None]
        # This process has imported far more than a server would (the official adapter, fastapi,
        # httpx), and a full collection walks all of it. Freezing what exists now keeps that
        # cost, which is not the graph's, out of the in-process figures; the server runs as
        # shipped unless --server-gc-freeze.
        gc.collect()
        gc.freeze()
        rows, frame = await measure(s, ways)
        print("  resume round trips", flush=True)
        resume = await bench_resume(s, server, client)
    info["load_average"] = {"start": load_start, "end": load_average()}
    results = report(s, rows, frame, resume, info)
    if s.profile_server is not None:
        print_profile(s.profile_server)
    return results


def parse_args(argv: Sequence[str] | None) -> Settings:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tokens", type=int, help="tokens per answer (5000; --quick: 1000)")
    parser.add_argument("--repeat", type=int, help="timed runs per way (5; --quick: 2)")
    parser.add_argument("--resume-repeat", type=int, help="resume round trips (10; --quick: 3)")
    parser.add_argument(
        "--quick", action="store_true", help="CI smoke: smaller defaults, same checks"
    )
    parser.add_argument(
        "--check", action="store_true", help="exit with status 1 when a target fails"
    )
    parser.add_argument(
        "--profile-server",
        type=Path,
        metavar="PATH",
        help="run the server under cProfile, write its stats to PATH and print the top entries",
    )
    parser.add_argument(
        "--server-gc-freeze",
        action="store_true",
        help="experiment: gc.freeze() in the server after its imports, before serving",
    )
    args = parser.parse_args(argv)
    quick = bool(args.quick)
    tokens: int = args.tokens if args.tokens is not None else (1000 if quick else 5000)
    repeat: int = args.repeat if args.repeat is not None else (2 if quick else 5)
    resume_repeat: int = (
        args.resume_repeat if args.resume_repeat is not None else (3 if quick else 10)
    )
    if min(tokens, repeat, resume_repeat) < 1:
        parser.error("--tokens, --repeat and --resume-repeat must be at least 1")
    return Settings(
        tokens=tokens,
        repeat=repeat,
        warmup=1,
        resume_repeat=resume_repeat,
        check=args.check,
        profile_server=args.profile_server.resolve() if args.profile_server else None,
        server_gc_freeze=args.server_gc_freeze,
    )


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # so that a SIGTERM, too, stops the server on the way out


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # started in the background by a shell
        signal.signal(signal.SIGINT, _interrupt)
    try:
        results = asyncio.run(run(settings))
    except BenchError as exc:
        print(f"stream_overhead: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stream_overhead: interrupted", file=sys.stderr)
        return 130
    RESULTS_PATH.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_PATH.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nSaved {RESULTS_PATH}")
    failed = [name for name, t in results["targets"].items() if not t["pass"]]
    return 1 if settings.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
