"""The load client of ``bench/load.py``: N concurrent AG-UI streams, timed per SSE frame.

It runs in its own process (standard library only, no HTTP library) so that it neither shares an
interpreter with the servers nor spends its CPU in an HTTP stack: each stream is a raw asyncio
connection speaking HTTP/1.1, with the chunked transfer coding decoded here. It reads a job as
JSON on standard input and prints its findings as JSON on standard output::

    {"targets": [{"host": "127.0.0.1", "port": 8000, "path": "/agents/default/run",
                  "headers": {"Authorization": "token ..."}}],
     "bodies": ["<RunAgentInput JSON>", ...],     # one per stream; stream i goes to target i % len
     "tokens": 200, "timeout": 120, "ramp": 0}

With ``ramp`` (seconds), stream i opens at ``i * ramp / N`` instead of all at once, as users'
requests arrive spread out rather than in one instant.

Per stream it notes the time to the first SSE frame (``ttfb``: from opening the connection to
the first ``data:`` frame complete), to the first ``TEXT_MESSAGE_CONTENT`` frame, and the gap
between each two consecutive frames, each frame stamped when the read that completed it returned (so
frames that arrive in one TCP read have a gap of 0). A stream counts as complete only when the
response was 200, the body ended properly (the last chunk of the chunked coding), it carried
exactly ``tokens`` content frames and its last frame was ``RUN_FINISHED``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any

CONTENT = b'"type":"TEXT_MESSAGE_CONTENT"'
FINISHED = b'"type":"RUN_FINISHED"'
ERROR = b'"type":"RUN_ERROR"'
READ_SIZE = 1 << 16


@dataclass
class Stream:
    target: int
    ok: bool = False
    error: str | None = None
    status: int | None = None
    ttfb: float | None = None
    first_token: float | None = None
    last_token: float | None = None  # time of the last content frame
    finished: float | None = None  # time of the frame that ended the run
    total: float | None = None
    frames: int = 0
    content: int = 0
    body_bytes: int = 0
    gaps: list[float] = field(default_factory=list)


class ChunkedDecoder:
    """Incremental decoder of the chunked transfer coding (RFC 9112 section 7.1)."""

    def __init__(self) -> None:
        self.buffer = b""
        self.remaining = -1  # bytes left in the current chunk; -1: a size line is next
        self.done = False

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        out: list[bytes] = []
        while not self.done:
            if self.remaining < 0:
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    break
                size = int(self.buffer[:end].split(b";", 1)[0].strip(), 16)
                self.buffer = self.buffer[end + 2 :]
                if size == 0:
                    self.done = True  # trailers, if any, are not read
                    break
                self.remaining = size
            if len(self.buffer) < self.remaining + 2:
                if len(self.buffer) > self.remaining:
                    break  # the chunk is here, its CRLF not yet
                out.append(self.buffer)
                self.remaining -= len(self.buffer)
                self.buffer = b""
                break
            out.append(self.buffer[: self.remaining])
            self.buffer = self.buffer[self.remaining + 2 :]
            self.remaining = -1
        return b"".join(out)


async def one_stream(target: dict[str, Any], index: int, body: bytes, tokens: int) -> Stream:
    result = Stream(target=index)
    headers = {
        "Host": f"{target['host']}:{target['port']}",
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Content-Length": str(len(body)),
        **target.get("headers", {}),
    }
    head = f"POST {target['path']} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()
    )
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(target["host"], target["port"])
    try:
        writer.write(head.encode("latin-1") + b"\r\n" + body)
        await writer.drain()
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        result.status = int(lines[0].split(" ", 2)[1])
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        chunked = "chunked" in fields.get("transfer-encoding", "").lower()
        length = int(fields["content-length"]) if "content-length" in fields else None
        if result.status != 200:
            rest = await reader.read(4096)
            raise RuntimeError(f"HTTP {result.status}: {rest[:300]!r}")
        decoder = ChunkedDecoder() if chunked else None
        pending = b""
        last_frame: bytes = b""
        last_time: float | None = None
        got = 0
        ended = False
        while True:
            data = await reader.read(READ_SIZE)
            now = time.perf_counter()
            if not data:
                ended = decoder is None and length is None  # read to EOF by design
                break
            payload = decoder.feed(data) if decoder is not None else data
            got += len(payload)
            pending += payload
            if b"\n\n" in pending:
                *frames, pending = pending.split(b"\n\n")
                for frame in frames:
                    if b"data:" not in frame:
                        continue  # a comment or a keep-alive
                    result.frames += 1
                    if last_time is None:
                        result.ttfb = now - start
                    else:
                        result.gaps.append(now - last_time)
                    last_time = now
                    if CONTENT in frame:
                        result.content += 1
                        result.last_token = now - start
                        if result.first_token is None:
                            result.first_token = now - start
                    if FINISHED in frame or ERROR in frame:
                        result.finished = now - start
                    last_frame = frame
            if (decoder is not None and decoder.done) or (length is not None and got >= length):
                ended = True
                break
        result.total = time.perf_counter() - start
        result.body_bytes = got
        if not ended:
            raise RuntimeError("the connection closed before the body ended")
        if ERROR in last_frame:
            raise RuntimeError(f"RUN_ERROR: {last_frame[:300]!r}")
        if FINISHED not in last_frame:
            raise RuntimeError(f"the last frame is not RUN_FINISHED: {last_frame[:200]!r}")
        if result.content != tokens:
            raise RuntimeError(f"{result.content} content frames, expected {tokens}")
        result.ok = True
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass
    return result


async def guarded(
    target: dict[str, Any], index: int, body: bytes, job: dict[str, Any], delay: float = 0.0
) -> Stream:
    if delay > 0:
        await asyncio.sleep(delay)
    try:
        return await asyncio.wait_for(
            one_stream(target, index, body, job["tokens"]), job["timeout"]
        )
    except asyncio.TimeoutError:
        return Stream(target=index, error=f"timed out after {job['timeout']} s")
    except Exception as exc:  # every failure is a finding, reported per stream
        return Stream(target=index, error=f"{type(exc).__name__}: {exc}")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks; ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


async def run(job: dict[str, Any]) -> dict[str, Any]:
    targets: list[dict[str, Any]] = job["targets"]
    bodies = [b.encode("utf-8") for b in job["bodies"]]
    gc.collect()
    gc.disable()  # the client's own pauses would show as gaps; it allocates little
    cpu = cpu_seconds()
    start = time.perf_counter()
    step = float(job.get("ramp") or 0.0) / max(len(bodies), 1)
    streams = await asyncio.gather(
        *(
            guarded(targets[i % len(targets)], i % len(targets), body, job, i * step)
            for i, body in enumerate(bodies)
        )
    )
    wall = time.perf_counter() - start
    client_cpu = cpu_seconds() - cpu
    gc.enable()
    gaps = [g for s in streams for g in s.gaps]
    ttfb = [s.ttfb for s in streams if s.ttfb is not None]
    first_token = [s.first_token for s in streams if s.first_token is not None]
    per_stream_max = [max(s.gaps) for s in streams if s.gaps]
    # The run's end: from its last token to RUN_FINISHED (checkpoint, lease, journal end).
    tail = [
        s.finished - s.last_token
        for s in streams
        if s.finished is not None and s.last_token is not None
    ]
    errors: dict[str, int] = {}
    for s in streams:
        if not s.ok:
            key = (s.error or "?")[:200]
            errors[key] = errors.get(key, 0) + 1
    return {
        "streams": len(streams),
        "completed": sum(s.ok for s in streams),
        "failed": sum(not s.ok for s in streams),
        "errors": errors,
        "per_target_completed": [
            sum(s.ok for s in streams if s.target == t) for t in range(len(targets))
        ],
        "wall": wall,
        "client_cpu": client_cpu,
        "ttfb": {q: percentile(ttfb, v) for q, v in (("p50", 0.5), ("p99", 0.99))},
        "first_token": {q: percentile(first_token, v) for q, v in (("p50", 0.5), ("p99", 0.99))},
        "gap": {
            "p50": percentile(gaps, 0.5),
            "p90": percentile(gaps, 0.9),
            "p99": percentile(gaps, 0.99),
            "max": max(gaps) if gaps else None,
            "count": len(gaps),
            "zero_share": (sum(g < 1e-4 for g in gaps) / len(gaps)) if gaps else None,
        },
        "stream_max_gap_p50": percentile(per_stream_max, 0.5),
        "tail": {q: percentile(tail, v) for q, v in (("p50", 0.5), ("p99", 0.99))}
        | {"max": max(tail) if tail else None},
        "frames_per_stream": percentile([float(s.frames) for s in streams if s.ok], 0.5),
        "body_bytes_per_stream": percentile([float(s.body_bytes) for s in streams if s.ok], 0.5),
        "sample_failures": [asdict(s) | {"gaps": len(s.gaps)} for s in streams if not s.ok][:3],
    }


def main() -> int:
    job = json.loads(sys.stdin.read())
    result = asyncio.run(run(job))
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
