"""Widget render cost: a long answer streamed into the chat widget in headless Chromium.

A standalone page (served from a local HTTP server) loads the built bundle
``gth_jupyter/static/widget.js`` and renders the widget with a stand-in for anywidget's model
(the shape of ``js/test-support/model.mjs``). The answer comes from one of two sources:

- **server**: ``gth-jupyter serve --memory`` on the scripted model (``tokenDelayMs`` 0), over
  HTTP with CORS: the real AG-UI stream, one ``TEXT_MESSAGE_CONTENT`` frame per token, arriving
  as fast as the server writes it;
- **replay**: the page's ``fetch`` answers the run with a prepared SSE body of the same frames,
  ``--replay-frames`` per chunk every 16 ms (a steady stream with no server in the way).

Measured from the moment the prompt is sent to the last paint of the answer:

- the longest main-thread task and the tasks over 50 ms, from a Chrome trace (``RunTask`` on
  the page's main thread), cross-checked with the Long Tasks API (``PerformanceObserver``);
- script and task time, from CDP ``Performance.getMetrics`` (``ScriptDuration``,
  ``TaskDuration``) before and after;
- that the work per token stays flat: the script time of each slice of 10,000 tokens, read
  from the trace between ``console.timeStamp`` marks the page sets when the painted answer
  passes each slice, and the ratio of the last slice's to the first's;
- that every token is on screen: the answer's text in the DOM holds every token id in order,
  the widget counted one ``TEXT_MESSAGE_CONTENT`` event per token, and (server) the thread's
  stored answer equals the scripted text.

Run from the repository root (needs ``/usr/bin/chromium`` and a built bundle)::

    .venv/bin/python bench/widget_render.py                # both sources, 100,000 tokens
    .venv/bin/python bench/widget_render.py --tokens 10000 # a quick look
    .venv/bin/python bench/widget_render.py --source replay --profile   # + top JS functions
    .venv/bin/python bench/widget_render.py --check        # exit 1 when a target fails

Results are printed and saved to ``bench/results/widget_render.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import itertools
import json
import os
import platform
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BUNDLE = REPO / "gth_jupyter" / "static" / "widget.js"
RESULTS_PATH = REPO / "bench" / "results" / "widget_render.json"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TARGET_TASK_MS = 50.0
TARGET_SLICE_RATIO = 1.5
THREAD_ID = "bench-thread"


def id_width(tokens: int) -> int:
    """Digits in a token id: five (``t00001``) up to 99,999 tokens, more beyond."""
    return max(5, len(str(tokens)))


def token_pattern(tokens: int) -> re.Pattern[str]:
    return re.compile(rf"t\d{{{id_width(tokens)}}}")


def answer_text(tokens: int) -> str:
    """``tokens`` whitespace-separated pieces, each holding a unique id (``t00001``…), with
    some Markdown: bold and code spans, and a paragraph break every 60 tokens. The scripted
    model streams one piece (with the whitespace after it) per ``TEXT_MESSAGE_CONTENT``."""
    parts = []
    width = id_width(tokens)
    for i in range(1, tokens + 1):
        word = f"t{i:0{width}d}"
        if i % 37 == 0:
            word = f"**{word}**"
        elif i % 53 == 0:
            word = f"`{word}`"
        sep = "\n\n" if i % 60 == 0 else " "
        parts.append(word + (sep if i < tokens else ""))
    return "".join(parts)


def token_ids(tokens: int) -> list[str]:
    width = id_width(tokens)
    return [f"t{i:0{width}d}" for i in range(1, tokens + 1)]


# -- the page --------------------------------------------------------------------------------------

# The page: __CONFIG__ (Jupyter's page config: base URL and token) and __SETUP__ are filled in.
PAGE = (Path(__file__).resolve().parent / "widget_render.html").read_text(encoding="utf-8")


class _Handler(http.server.BaseHTTPRequestHandler):
    files: dict[str, tuple[bytes, str]] = {}

    def do_GET(self) -> None:
        body, kind = self.files.get(self.path.split("?")[0], (b"not found", "text/plain"))
        self.send_response(200 if kind != "text/plain" else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def page_server(files: dict[str, tuple[bytes, str]]) -> Iterator[str]:
    handler = type("Handler", (_Handler,), {"files": files})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


# -- the AG-UI server ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def agui_server(text: str, origin: str, workdir: Path) -> Iterator[tuple[str, str]]:
    """``gth-jupyter serve`` on the scripted model, answering CORS for ``origin``."""
    config = {
        "llm": {"type": "fake", "responses": [WARM_UP_ANSWER, text], "tokenDelayMs": 0},
        "commands": {"api": {"cors": {"allowOrigin": origin}}},
    }
    path = workdir / ".gsloth.config.json"
    path.write_text(json.dumps(config))
    port, token = free_port(), secrets.token_hex(12)
    cmd = [sys.executable, "-m", "gth_jupyter.server.cli", "serve", "--memory"]
    cmd += ["--port", str(port), "--token", token, "-c", str(path)]
    log = (workdir / "server.log").open("wb")
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError((workdir / "server.log").read_text())
            try:
                get_json(base + "gth/health", token)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield base, token
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def get_json(url: str, token: str) -> Any:
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


# -- measuring -------------------------------------------------------------------------------------


@dataclass
class Result:
    source: str
    tokens: int
    wall_ms: float = 0.0
    longest_task_ms: float = 0.0
    longest_task_cpu_ms: float = 0.0
    tasks_over_50: int = 0
    longtask_api_max_ms: float = 0.0
    longtask_api_count: int = 0
    script_ms: float = 0.0
    task_ms: float = 0.0
    trace_js_ms: float = 0.0
    first_exchange_longest_task_ms: float = 0.0
    slice_tokens: int = 0
    slice_script_ms: list[float] = field(default_factory=list)
    slice_task_ms: list[float] = field(default_factory=list)
    content_events: int = 0
    on_screen: bool = False
    stored_matches: bool | None = None
    notes: list[str] = field(default_factory=list)
    profile_top: list[dict[str, Any]] = field(default_factory=list)

    @property
    def slice_ratio(self) -> float | None:
        """Script time of the last slice over the first's (None with fewer than two)."""
        if len(self.slice_script_ms) < 2 or not self.slice_script_ms[0]:
            return None
        return round(self.slice_script_ms[-1] / self.slice_script_ms[0], 2)

    @property
    def linear(self) -> bool:
        ratio = self.slice_ratio
        return ratio is None or ratio <= TARGET_SLICE_RATIO

    @property
    def passed(self) -> bool:
        return self.on_screen and self.longest_task_ms <= TARGET_TASK_MS and self.linear


def _page_thread(events: list[dict[str, Any]]) -> tuple[int, int] | None:
    """The page renderer's main thread: of the ``CrRendererMain`` threads, the one that ran
    the most script."""
    main = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "thread_name"
        and e.get("args", {}).get("name") == "CrRendererMain"
    }
    per_thread: Counter[tuple[int, int]] = Counter()
    for e in events:
        key = (e.get("pid"), e.get("tid"))
        if key in main and e.get("name") in ("FunctionCall", "EvaluateScript", "RunMicrotasks"):
            per_thread[key] += int(e.get("dur", 0))
    return per_thread.most_common(1)[0][0] if per_thread else None


def task_spans(trace: Any) -> list[tuple[float, float, float]]:
    """(start µs, wall µs, CPU µs) of each top-level slice on the page renderer's main thread: its
    tasks, and the microtask checkpoints Chrome runs outside a task (where a fetch body is
    read). CPU time is the thread's own (``tdur``): on a loaded machine the wall time also
    counts the time the renderer waited for a CPU."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    thread = _page_thread(events)
    if thread is None:
        return []
    slices = sorted(
        (e["ts"], e["dur"], e.get("tdur", e["dur"]))
        for e in events
        if (e.get("pid"), e.get("tid")) == thread and e.get("ph") == "X" and "dur" in e
    )
    tasks: list[tuple[float, float, float]] = []
    end = -1.0
    for ts, dur, tdur in slices:
        if ts >= end:  # not nested in the slice before: a new top-level slice
            tasks.append((ts, dur, tdur))
            end = ts + dur
    return tasks


JS_SLICES = {"FunctionCall", "RunMicrotasks", "EvaluateScript", "v8.callFunction", "V8.Execute"}


def js_intervals(trace: Any) -> list[tuple[float, float]]:
    """When the page's main thread ran script (µs, trace clock): the union of its
    ``FunctionCall`` / ``RunMicrotasks`` / ``EvaluateScript`` / ``v8.callFunction`` slices,
    nested ones counted once."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    thread = _page_thread(events)
    if thread is None:
        return []
    spans = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if (e.get("pid"), e.get("tid")) == thread
        and e.get("ph") == "X"
        and e.get("name") in JS_SLICES
        and "dur" in e
    )
    merged: list[tuple[float, float]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def main_thread_js_ms(trace: Any) -> float:
    """Time (ms) the page's main thread spent running script (``js_intervals``)."""
    return sum(b - a for a, b in js_intervals(trace)) / 1000


def slice_marks(trace: Any) -> list[float]:
    """Trace times (µs) of the page's ``console.timeStamp("gth-slice-<k>")`` marks, by k: the
    send (0) and each time the painted answer passed another slice of tokens."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    marks: dict[int, float] = {}
    for e in events:
        if e.get("name") != "TimeStamp":
            continue
        message = str(e.get("args", {}).get("data", {}).get("message", ""))
        if message.startswith("gth-slice-"):
            marks.setdefault(int(message.removeprefix("gth-slice-")), float(e["ts"]))
    return [marks[k] for k in range(len(marks)) if k in marks]


def per_slice(marks: list[float], intervals: list[tuple[float, float]]) -> list[float]:
    """Time (ms) within ``intervals`` between each pair of consecutive marks."""
    out = []
    for start, end in itertools.pairwise(marks):
        total = sum(max(0.0, min(b, end) - max(a, start)) for a, b in intervals)
        out.append(round(total / 1000, 1))
    return out


def top_functions(profile: dict[str, Any], limit: int = 15) -> list[dict[str, Any]]:
    """Self time per function from a CDP CPU profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    self_us: Counter[int] = Counter()
    for node_id, delta in zip(profile["samples"], profile["timeDeltas"], strict=False):
        self_us[node_id] += delta
    by_fn: Counter[str] = Counter()
    for node_id, us in self_us.items():
        frame = nodes[node_id]["callFrame"]
        name = frame.get("functionName") or "(anonymous)"
        url = frame.get("url", "").rsplit("/", 1)[-1]
        where = f"{url}:{frame.get('lineNumber', 0) + 1}" if url else ""
        by_fn[f"{name} {where}".strip()] += us
    return [{"function": k, "self_ms": round(v / 1000, 1)} for k, v in by_fn.most_common(limit)]


WARM_UP_ANSWER = "Warm-up answer."
TRACE_CATEGORIES = ["toplevel", "devtools.timeline", "v8.execute"]


@dataclass
class Timed:
    """One exchange: its main-thread tasks (trace), CDP metric deltas and Long Tasks API."""

    tasks: list[tuple[float, float]]
    slice_script_ms: list[float]
    slice_task_ms: list[float]
    script_ms: float
    task_ms: float
    trace_js_ms: float
    longtasks: list[dict[str, float]]
    wall_ms: float


def timed_exchange(
    browser: Any, page: Any, cdp: Any, prompt: str, answers: int, last: str, slice_tokens: int = 0
) -> Timed:
    """Send ``prompt`` and wait until the widget is idle with ``answers`` assistant messages,
    the last one holding ``last``; with ``slice_tokens``, time each slice of that many tokens."""
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    page.evaluate("([p, n]) => window.__send(p, n)", [prompt, slice_tokens])
    # The answer's text is read only once the widget is idle: reading a long answer's
    # textContent on every poll would itself be script that grows with the answer.
    page.wait_for_function(
        """([answers, last]) => {
          const root = document.querySelector('.gth-root');
          if (root.dataset.state !== 'idle') return false;
          const msgs = root.querySelectorAll('.gth-msg-assistant .gth-msg-content');
          return msgs.length === answers && msgs[answers - 1].textContent.includes(last);
        }""",
        arg=[answers, last],
        polling=100,
        timeout=300_000,
    )
    page.wait_for_timeout(200)  # a last frame, if any
    after = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    raw = browser.stop_tracing()
    if os.environ.get("GTH_BENCH_TRACE"):
        Path(os.environ["GTH_BENCH_TRACE"]).write_bytes(raw)
    trace = json.loads(raw)
    # Only tasks after the send (the buffered observer also reports the page load's).
    longtasks = page.evaluate("window.__longtasks.filter(t => t.start >= window.__sentAt)")
    marks = slice_marks(trace)
    spans = task_spans(trace)
    return Timed(
        tasks=[(dur / 1000, tdur / 1000) for _, dur, tdur in spans],
        slice_script_ms=per_slice(marks, js_intervals(trace)),
        slice_task_ms=per_slice(marks, [(ts, ts + dur) for ts, dur, _ in spans]),
        script_ms=round((after["ScriptDuration"] - before["ScriptDuration"]) * 1000, 1),
        task_ms=round((after["TaskDuration"] - before["TaskDuration"]) * 1000, 1),
        trace_js_ms=round(main_thread_js_ms(trace), 1),
        longtasks=longtasks,
        wall_ms=round(page.evaluate("window.__lastPaint - window.__sentAt"), 1),
    )


def run_one(
    browser: Any, source: str, page_url: str, tokens: int, *, profile: bool, slice_tokens: int
) -> Result:
    result = Result(source=source, tokens=tokens, slice_tokens=slice_tokens)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(page_url)
    page.wait_for_selector(".gth-root[data-ready=true]", timeout=60_000)
    # A short exchange first: the first send of a page meets cold code (zod compiles the
    # AG-UI schemas, V8 compiles the bundle's functions), which is not the stream's cost.
    warm = timed_exchange(browser, page, cdp, "Warm up, please.", 1, WARM_UP_ANSWER)
    result.first_exchange_longest_task_ms = round(max((w for w, _ in warm.tasks), default=0.0), 1)
    if profile:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
        cdp.send("Profiler.start")
    run = timed_exchange(
        browser, page, cdp, "Stream the long answer.", 2, token_ids(tokens)[-1], slice_tokens
    )
    if profile:
        result.profile_top = top_functions(cdp.send("Profiler.stop")["profile"])
    result.wall_ms = run.wall_ms
    result.script_ms = run.script_ms
    result.task_ms = run.task_ms
    result.trace_js_ms = run.trace_js_ms
    result.slice_script_ms = run.slice_script_ms
    result.slice_task_ms = run.slice_task_ms
    expected_slices = tokens // slice_tokens if slice_tokens else 0
    if len(run.slice_script_ms) != expected_slices:
        result.notes.append(f"{len(run.slice_script_ms)} slices timed of {expected_slices}")
    result.longest_task_ms = round(max((w for w, _ in run.tasks), default=0.0), 1)
    result.longest_task_cpu_ms = round(max((c for _, c in run.tasks), default=0.0), 1)
    result.tasks_over_50 = sum(1 for w, _ in run.tasks if w > TARGET_TASK_MS)
    result.longtask_api_count = len(run.longtasks)
    result.longtask_api_max_ms = round(max((t["duration"] for t in run.longtasks), default=0.0), 1)
    if not run.tasks:
        result.notes.append("no tasks in the trace: longest task from the Long Tasks API")
        result.longest_task_ms = result.longtask_api_max_ms
        result.tasks_over_50 = result.longtask_api_count

    dom_text = page.eval_on_selector_all(
        ".gth-msg-assistant .gth-msg-content", "els => els[els.length - 1].textContent"
    )
    result.on_screen = token_pattern(tokens).findall(dom_text) == token_ids(tokens)
    counts = page.eval_on_selector_all(
        ".gth-event[data-type=TEXT_MESSAGE_CONTENT]", "els => els.map(e => Number(e.dataset.count))"
    )
    result.content_events = int(counts[-1]) if counts else 0
    if result.content_events != tokens:
        result.notes.append(f"{result.content_events} content events for {tokens} tokens")
    page.close()
    return result


def build_unminified(workdir: Path) -> bytes:
    """The bundle without minification, so a CPU profile names our functions."""
    out = workdir / "widget.dev.js"
    script = (
        "import { build } from 'esbuild';"
        "import { widgetConfig } from './build.config.mjs';"
        f"await build({{ ...widgetConfig, minify: false, outfile: {json.dumps(str(out))} }});"
    )
    subprocess.run(["node", "--input-type=module", "-e", script], cwd=REPO / "js", check=True)
    return out.read_bytes()


def measure(args: argparse.Namespace) -> list[Result]:
    from playwright.sync_api import sync_playwright

    if not args.bundle.exists():
        raise SystemExit(f"{args.bundle} is missing: run `cd js && npm run build`")
    text = answer_text(args.tokens)
    from gth_jupyter.models._reply import split_tokens

    deltas = split_tokens(text)
    assert len(deltas) == args.tokens, (len(deltas), args.tokens)
    results = []
    with tempfile.TemporaryDirectory(prefix="gth-widget-bench-") as tmp:
        workdir = Path(tmp)
        bundle = build_unminified(workdir) if args.profile else args.bundle.read_bytes()
        files: dict[str, tuple[bytes, str]] = {"/widget.js": (bundle, "text/javascript")}
        with page_server(files) as origin, sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            try:
                for source in args.sources:
                    with contextlib.ExitStack() as stack:
                        if source == "server":
                            base, token = stack.enter_context(agui_server(text, origin, workdir))
                            config = {"baseUrl": base, "token": token}
                            setup = {"replay": False, "baseUrl": base, "threadId": THREAD_ID}
                        else:
                            base, token = origin + "/", ""
                            config = {"baseUrl": base}
                            setup = {
                                "replay": True,
                                "baseUrl": base,
                                "threadId": THREAD_ID,
                                "deltas": deltas,
                                "warmUp": split_tokens(WARM_UP_ANSWER),
                                "perChunk": args.replay_frames,
                            }
                        page = PAGE.replace("__CONFIG__", json.dumps(config)).replace(
                            "__SETUP__", json.dumps(setup)
                        )
                        files[f"/{source}.html"] = (page.encode(), "text/html; charset=utf-8")
                        url = f"{origin}/{source}.html"
                        result = run_one(
                            browser,
                            source,
                            url,
                            args.tokens,
                            profile=args.profile,
                            slice_tokens=args.slice_tokens,
                        )
                        if source == "server":
                            thread = get_json(f"{base}gth/threads/{THREAD_ID}", token)
                            stored = [m for m in thread["messages"] if m["role"] == "assistant"]
                            result.stored_matches = (
                                len(stored) == 2 and stored[-1]["content"] == text
                            )
                        results.append(result)
            finally:
                browser.close()
    return results


def print_table(results: list[Result]) -> None:
    head = (
        f"{'source':<7} {'tokens':>6} {'wall ms':>7} {'longest task ms (CPU)':>21} "
        f"{'script ms':>9} {'task ms':>7} {'tasks >50 ms':>12} {'all tokens on screen':>20}"
        f" {'first/last slice script ms':>26} {'ratio':>5}  targets"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        slices = (
            f"{r.slice_script_ms[0]:.0f} / {r.slice_script_ms[-1]:.0f}"
            if r.slice_script_ms
            else "-"
        )
        ratio = f"{r.slice_ratio:.2f}" if r.slice_ratio is not None else "-"
        print(
            f"{r.source:<7} {r.tokens:>6} {r.wall_ms:>7.0f} "
            f"{f'{r.longest_task_ms:.1f} ({r.longest_task_cpu_ms:.1f})':>21} "
            f"{r.script_ms:>9.0f} {r.task_ms:>7.0f} {r.tasks_over_50:>12} "
            f"{'yes' if r.on_screen else 'NO':>20} {slices:>26} {ratio:>5}  "
            f"{'PASS' if r.passed else 'FAIL'}"
        )
    print(
        "wall: send to last paint; longest task: top-level slices of the page's main thread in a"
        " Chrome trace, wall time (the thread's CPU time); script/task: CDP ScriptDuration/"
        "TaskDuration; slices: script time (trace) of the first and last"
        f" {results[0].slice_tokens:,} tokens, ratio last/first (target <="
        f" {TARGET_SLICE_RATIO}); targets: every token on screen, no task >"
        f" {TARGET_TASK_MS:.0f} ms, ratio."
    )
    for r in results:
        extra = [
            f"JS incl. the DOM work it forces (trace) {r.trace_js_ms:.0f} ms",
            f"Long Tasks API: {r.longtask_api_count} over 50 ms"
            + (f" (max {r.longtask_api_max_ms} ms)" if r.longtask_api_count else ""),
            f"{r.content_events} TEXT_MESSAGE_CONTENT events",
            "first exchange of the page (cold code) longest task "
            f"{r.first_exchange_longest_task_ms} ms",
        ]
        if r.stored_matches is not None:
            extra.append(f"stored answer {'==' if r.stored_matches else '!='} script")
        print(f"  {r.source}: " + "; ".join(extra + r.notes))
        if r.slice_script_ms:
            print(
                f"    script ms per {r.slice_tokens:,} tokens: "
                + " ".join(f"{v:.0f}" for v in r.slice_script_ms)
            )
            print(
                f"    task ms per {r.slice_tokens:,} tokens:   "
                + " ".join(f"{v:.0f}" for v in r.slice_task_ms)
            )
        for row in r.profile_top:
            print(f"      {row['self_ms']:>8.1f} ms  {row['function']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument(
        "--slice-tokens",
        type=int,
        default=10_000,
        help="tokens per timed slice (the first and last are compared; 0: no slices)",
    )
    parser.add_argument("--source", choices=["server", "replay", "both"], default="both")
    parser.add_argument("--replay-frames", type=int, default=100, help="frames per 16 ms chunk")
    parser.add_argument("--profile", action="store_true", help="CPU-profile an unminified bundle")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target fails")
    parser.add_argument(
        "--bundle", type=Path, default=BUNDLE, help="widget.js to load (to compare builds)"
    )
    args = parser.parse_args()
    args.sources = ["server", "replay"] if args.source == "both" else [args.source]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    results = measure(args)
    print_table(results)
    if load is not None:
        print(f"load average at start: {load:.2f} on {os.cpu_count()} CPUs")
        if load > (os.cpu_count() or 1):
            print(
                "  the machine is loaded: a task's wall time includes time the renderer waited"
                " for a CPU; the CPU figure is what the page itself spent"
            )
    RESULTS_PATH.parent.mkdir(parents=True, exist_ok=True)
    out = {
        "tokens": args.tokens,
        "target_task_ms": TARGET_TASK_MS,
        "target_slice_ratio": TARGET_SLICE_RATIO,
        "slice_tokens": args.slice_tokens,
        "profile": args.profile,
        "replay_frames_per_chunk": args.replay_frames,
        "load_average": load,
        "platform": platform.platform(),
        "bundle": str(args.bundle),
        "bundle_bytes": args.bundle.stat().st_size,
        "results": [
            asdict(r) | {"slice_ratio": r.slice_ratio, "passed": r.passed} for r in results
        ],
    }
    RESULTS_PATH.write_text(json.dumps(out, indent=2) + "\n")
    print(f"saved {RESULTS_PATH.relative_to(REPO)}")
    return 1 if args.check and not all(r.passed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
