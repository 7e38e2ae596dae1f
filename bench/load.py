"""Many users at once: N concurrent AG-UI streams against our server(s) and the official adapter.

Every stream is one run of the scripted model (``llm.type: "fake"``): ``--tokens`` tokens
(``"tok "`` each) with ``--delay-ms`` between tokens, one ``TEXT_MESSAGE_CONTENT`` frame per
token. For each N in ``--streams`` and each configuration, fresh server processes are started,
warmed up with a few sequential runs, then a separate client process (``bench/_load_client.py``:
raw asyncio HTTP/1.1, no HTTP library) opens all N streams at once and reads them to the end:

- **ours, 1 server**: one ``gth-jupyter serve --memory`` process;
- **ours, 2 servers**: two ``gth-jupyter serve --checkpointer postgres`` processes with
  ``GTH_JUPYTER_DATABASE_URL`` (a fresh database for the bench run) and ``GTH_JUPYTER_REDIS_URL``;
  streams alternate between them. PostgreSQL and Redis come from ``$GTH_TEST_DATABASE_URL`` /
  ``$GTH_TEST_REDIS_URL``, else ``scripts/services.sh`` starts them for the run;
- **official**: ``ag_ui_langgraph``'s FastAPI endpoint on the same graph and scripted model,
  under uvicorn in its own process (this script with ``--serve-official``).

A configuration that cannot run prints ``skipped: <why>`` and the others go on. Reported per
configuration: streams completed/failed (a lost or incomplete stream is a failure, printed
loudly), time to the first SSE frame p50/p99, the gap between consecutive frames of a stream at
the client p50/p99/max, the time from a stream's last token to ``RUN_FINISHED``, wall time, CPU
seconds and peak RSS (``VmHWM``) of each server process, the client's CPU (it must not be the
limit), how busy the machine's CPUs were, connections dropped by a full accept queue, and ratios
against the official adapter; for two servers also the streams each completed and what they did
in the shared stores (PostgreSQL transactions and Redis commands per run, the CPU of the
PostgreSQL backends and Redis). The last line checks the goal: 200 streams, none lost, gap p99
under 50 ms for ours.

``--capacity`` measures instead how many concurrent streams one server process holds at a real
model's pace (``--pace-ms``, 30 ms between tokens): for ours (one ``--memory`` server) and the
official adapter, in turn at each step, N streams of ``--capacity-tokens`` tokens whose starts
are spread over ``--ramp`` seconds; N doubles from ``--capacity-start`` until a level fails,
then is bisected. A level holds when every stream completes and the gap between consecutive
frames at the client has p99 under ``--gap-limit-ms`` (50). It prints every level tried and the
largest that held, for each (a level that does not hold is tried once more, ``--capacity-tries``,
before it counts: the machine may be shared). Run from the repository root::

    .venv/bin/python bench/load.py                                  # N = 50 and 200 (~2 min)
    .venv/bin/python bench/load.py --capacity                       # ~3 min on 2 cores
    .venv/bin/python bench/load.py --streams 50,200 --tokens 200 --delay-ms 5
    .venv/bin/python bench/load.py --only official --official-raw-events false
    .venv/bin/python bench/load.py --streams 200 --only ours1 --profile-server /tmp/load.prof

Results are printed and saved to ``bench/results/load.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from stream_overhead import (
    READY_PREFIX,
    SERVER_START_TIMEOUT,
    BenchError,
    Server,
    _drain,
    _stop,
    _wait_ready,
    check_text_run,
    free_port,
    library_versions,
    load_average,
    machine,
    new_id,
    post_run,
    print_profile,
    process_cpu_seconds,
    run_body,
    script_text,
)

THIS = Path(__file__).resolve()
BENCH = THIS.parent
ROOT = BENCH.parent
RESULTS_PATH = BENCH / "results" / "load.json"
CLIENT = BENCH / "_load_client.py"
SERVICES = ROOT / "scripts" / "services.sh"
PROMPT = "Please stream an answer."
RUN_PATH = "/agents/default/run"  # the official endpoint is mounted there too
OFFICIAL_READY = "official adapter ready on http://"
CONFIGS = ("ours1", "ours2", "official")
LABELS = {
    "ours1": "ours, 1 server (--memory)",
    "ours2": "ours, 2 servers (postgres+redis)",
    "official": "official ag-ui-langgraph (uvicorn)",
}
GOAL_STREAMS = 200
GOAL_GAP_P99 = 0.050


@dataclass
class Settings:
    streams: list[int]
    tokens: int
    delay_ms: float
    warmup: int
    timeout: float
    only: list[str]
    official_raw_events: bool | None
    profile_server: Path | None
    #: Seconds over which the streams' starts are spread (0: all at once).
    ramp: float = 0.0
    capacity: Capacity | None = None


@dataclass
class Capacity:
    """The capacity search (``--capacity``)."""

    pace_ms: float = 30.0
    tokens: int = 100
    ramp: float = 1.0
    gap_limit: float = GOAL_GAP_P99
    start: int = 10
    most: int = 1024
    #: Tries of a level before it counts as not holding (the machine is shared: another job's
    #: burst alone can push a gap past the limit).
    tries: int = 2


@dataclass
class Proc:
    """One server process of a configuration."""

    server: Server
    cpu_start: float | None = None
    cpu_used: float | None = None
    peak_rss_mb: float | None = None


@dataclass
class Outcome:
    config: str
    streams: int
    skipped: str | None = None
    client: dict[str, Any] = field(default_factory=dict)
    servers: list[dict[str, Any]] = field(default_factory=list)
    machine_busy: float | None = None
    load: list[float] | None = None
    listen_overflows: int | None = None
    shared: str | None = None
    services_cpu: float | None = None


# -- measuring processes and the machine ---------------------------------------------------------


def peak_rss_mb(pid: int) -> float | None:
    """``VmHWM`` (peak resident set) of a process, in MiB; ``None`` when unreadable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def machine_busy_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs from ``/proc/stat``."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return None
    values = [int(x) for x in first[1:9]]  # user nice system idle iowait irq softirq steal
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def listen_overflows() -> int | None:
    """``TcpExt: ListenOverflows`` of this network namespace: connections whose handshake was
    dropped because a listening socket's accept queue was full (the client retries in ~1 s)."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split()[1:], values.split()[1:], strict=True))
            return int(table["ListenOverflows"]) if "ListenOverflows" in table else None
    return None


# -- services and the shared database ------------------------------------------------------------


@contextlib.contextmanager
def services() -> Iterator[tuple[str | None, str | None, str]]:
    """(PostgreSQL admin URL, Redis URL, how they were had): from the environment, else
    ``scripts/services.sh`` for this run (stopped on the way out)."""
    db, redis = os.environ.get("GTH_TEST_DATABASE_URL"), os.environ.get("GTH_TEST_REDIS_URL")
    if db and redis:
        yield db, redis, "from $GTH_TEST_DATABASE_URL / $GTH_TEST_REDIS_URL"
        return
    folder = tempfile.mkdtemp(prefix="gth-load-services-")
    print("  starting PostgreSQL and Redis (scripts/services.sh)", flush=True)
    out = subprocess.run(
        ["bash", str(SERVICES), "start", folder], capture_output=True, text=True, timeout=900
    )
    found: dict[str, str] = {}
    for line in out.stdout.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        if value:
            found[name] = value
    try:
        how = "started by scripts/services.sh" + (f" ({out.stderr.strip()})" if out.stderr else "")
        yield (
            db or found.get("GTH_TEST_DATABASE_URL"),
            redis or found.get("GTH_TEST_REDIS_URL"),
            how,
        )
    finally:
        subprocess.run(["bash", str(SERVICES), "stop", folder], check=False, timeout=120)


@contextlib.contextmanager
def fresh_database(admin: str) -> Iterator[str]:
    """A new database for one batch, dropped afterwards: the test suite's helper."""
    if str(ROOT) not in sys.path:  # run as `python bench/load.py`: bench/ is on the path
        sys.path.insert(0, str(ROOT))
    from tests.services import fresh_database as fresh

    yield from fresh(admin, prefix="gth_load_")


@dataclass
class StoreCounters:
    """Counters of the shared stores, read before and after a 2-server batch."""

    transactions: int | None = None  # committed transactions in the bench's database
    redis_commands: int | None = None  # commands Redis processed (all clients)
    threads: int | None = None
    redis_keys: int | None = None
    errors: list[str] = field(default_factory=list)


def service_cpu(db: str, redis: str) -> dict[int, float]:
    """CPU seconds of each process serving the bench: PostgreSQL backends connected to its
    database (their title names it) and the Redis server on its port."""
    name = urlsplit(db).path.lstrip("/")
    port = f":{urlsplit(redis).port}"
    found: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (line.startswith("postgres:") and f" {name} " in line) or (
            "redis-server" in line and port in line
        ):
            cpu = process_cpu_seconds(int(entry.name))
            if cpu is not None:
                found[int(entry.name)] = cpu
    return found


def store_counters(db: str, redis: str) -> StoreCounters:
    found = StoreCounters()
    try:
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            row = conn.execute(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            found.transactions = int(row[0]) if row else None
            row = conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()
            found.threads = int(row[0]) if row else None
    except Exception as exc:
        found.errors.append(f"PostgreSQL: {type(exc).__name__}: {exc}")
    try:
        import redis as redis_client

        client = redis_client.Redis.from_url(redis)
        found.redis_keys = int(client.dbsize())
        found.redis_commands = int(client.info("stats")["total_commands_processed"])
    except Exception as exc:
        found.errors.append(f"Redis: {type(exc).__name__}: {exc}")
    return found


def shared_state(before: StoreCounters, after: StoreCounters, runs: int) -> str:
    """What the servers did in the shared stores during a batch of ``runs`` (and warm-ups)."""
    parts: list[str] = []
    if after.threads is not None:
        parts.append(f"{after.threads} threads checkpointed in PostgreSQL")
    if after.transactions is not None and before.transactions is not None:
        per_run = (after.transactions - before.transactions) / runs
        parts.append(f"{per_run:.1f} PostgreSQL transactions per run")
    if after.redis_commands is not None and before.redis_commands is not None:
        per_run = (after.redis_commands - before.redis_commands) / runs
        used = "" if after.redis_keys else " (no keys: serve did not use Redis)"
        parts.append(f"{per_run:.1f} Redis commands per run, {after.redis_keys} keys{used}")
    return ", ".join(parts + after.errors)


def serve_supports_postgres() -> str | None:
    """``None`` when ``gth-jupyter serve`` has ``--checkpointer`` (with postgres), else why not."""
    out = subprocess.run(
        [sys.executable, "-m", "gth_jupyter.server.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    if "--checkpointer" not in out.stdout:
        return "gth-jupyter serve has no --checkpointer option yet (the postgres store is not in)"
    if "postgres" not in out.stdout:
        return "gth-jupyter serve --checkpointer does not list postgres"
    return None


# -- servers -------------------------------------------------------------------------------------


def scripted_answers(s: Settings, runs: int) -> list[Any]:
    """One answer per run a server will see: the warm-up runs' first, without the token delay
    (they only take first-request costs out of the way), then the paced ones."""
    text = script_text(s.tokens)
    fast: list[Any] = [{"content": text, "delayMs": 0}] * min(s.warmup, runs)
    return fast + [text] * (runs - len(fast))


def server_config(s: Settings, runs: int) -> dict[str, Any]:
    """The scripted model with one answer per run this server will see (warm-up included)."""
    responses = scripted_answers(s, runs)
    llm = {"type": "fake", "tokenDelayMs": s.delay_ms, "responses": responses}
    return {"llm": llm, "builtInTools": []}


@contextlib.asynccontextmanager
async def start_process(
    command: list[str], cwd: Path, prefix: str, token: str, env: dict[str, str] | None = None
) -> AsyncIterator[Server]:
    log: deque[str] = deque(maxlen=40)
    process = await asyncio.create_subprocess_exec(
        *command,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    drains = [asyncio.ensure_future(_drain(process.stderr, log))]
    try:
        try:
            url = await asyncio.wait_for(_wait_ready(process, log, prefix), SERVER_START_TIMEOUT)
        except asyncio.TimeoutError:
            raise BenchError(
                f"the server did not start within {SERVER_START_TIMEOUT:.0f} s: "
                + " | ".join(list(log)[-8:])
            ) from None
        drains.append(asyncio.ensure_future(_drain(process.stdout, log)))
        yield Server(url, token, process, log)
    finally:
        await _stop(process)
        for task in drains:
            task.cancel()
        await asyncio.gather(*drains, return_exceptions=True)


# ``--profile-server``: cProfile on CPU time (the machine is shared, and a wall-clock profile
# of a starved process charges its waits to whatever call it was in), dumped on SIGTERM.
_PROFILED = (
    "import cProfile, sys, time\n"
    "from gth_jupyter.server.cli import main\n"
    "profile = cProfile.Profile(time.process_time)\n"
    "profile.enable()\n"
    "try:\n"
    "    code = main(sys.argv[2:])\n"
    "finally:\n"
    "    profile.disable()\n"
    "    profile.dump_stats(sys.argv[1])\n"
    "sys.exit(code)\n"
)


def ours_command(config: Path, port: int, store: list[str], profile: Path | None) -> list[str]:
    """The token goes in ``$GTH_JUPYTER_TOKEN``: with ``--token`` the server re-executes."""
    args = ["serve", *store, "--port", str(port), "-c", str(config)]
    if profile is not None:
        return [sys.executable, "-c", _PROFILED, str(profile), *args]
    script = Path(sys.executable).with_name("gth-jupyter")
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-m", "gth_jupyter.server.cli", *args]


@contextlib.asynccontextmanager
async def servers_for(
    config: str, s: Settings, streams: int, tmp: Path, db: str | None, redis: str | None
) -> AsyncIterator[list[Server]]:
    count = 2 if config == "ours2" else 1
    runs = s.warmup + -(-streams // count) + 2
    config_path = tmp / f"{config}.gsloth.config.json"
    config_path.write_text(json.dumps(server_config(s, runs)), encoding="utf-8")
    async with contextlib.AsyncExitStack() as stack:
        started: list[Server] = []
        for _ in range(count):
            port = free_port()
            if config == "official":
                command = [
                    sys.executable,
                    str(THIS),
                    "--serve-official",
                    str(port),
                    "--tokens",
                    str(s.tokens),
                    "--delay-ms",
                    str(s.delay_ms),
                    "--responses",
                    str(runs),
                    "--warmup",
                    str(s.warmup),
                ]
                if s.official_raw_events is not None:
                    command += ["--official-raw-events", str(s.official_raw_events).lower()]
                server = await stack.enter_async_context(
                    start_process(command, tmp, OFFICIAL_READY, "none")
                )
            else:
                token = uuid.uuid4().hex
                env = {"GTH_JUPYTER_TOKEN": token}
                if config == "ours1":
                    store = ["--memory"]
                else:
                    assert db is not None and redis is not None
                    store = ["--checkpointer", "postgres"]
                    env |= {"GTH_JUPYTER_DATABASE_URL": db, "GTH_JUPYTER_REDIS_URL": redis}
                profile = s.profile_server
                if profile is not None and config == "ours2":
                    profile = profile.with_name(f"{profile.name}.ours2-{len(started)}")
                command = ours_command(config_path, port, store, profile)
                server = await stack.enter_async_context(
                    start_process(command, tmp, READY_PREFIX, token, env)
                )
            started.append(server)
        yield started


async def warm_up(s: Settings, servers: list[Server]) -> None:
    """A few sequential runs per server (first-request costs out of the way), checked whole."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as client:
        for server in servers:
            for _ in range(s.warmup):
                user = {"id": new_id("user"), "role": "user", "content": PROMPT}
                timed = await post_run(client, server, run_body(new_id("warm"), [user]))
                check_text_run(timed.body, s.tokens, f"warm-up on {server.url}")


def client_job(s: Settings, servers: list[Server], streams: int) -> dict[str, Any]:
    targets = []
    for server in servers:
        url = urlsplit(server.url)
        headers = {"Authorization": f"token {server.token}"} if server.token != "none" else {}
        target = {"host": url.hostname, "port": url.port, "path": RUN_PATH, "headers": headers}
        targets.append(target)
    bodies = []
    for _ in range(streams):
        user = {"id": new_id("user"), "role": "user", "content": PROMPT}
        bodies.append(run_body(new_id("load"), [user]).decode("utf-8"))
    timeout = s.timeout + s.ramp
    return {
        "targets": targets,
        "bodies": bodies,
        "tokens": s.tokens,
        "timeout": timeout,
        "ramp": s.ramp,
    }


async def run_client(job: dict[str, Any], timeout: float) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(CLIENT),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(
            process.communicate(json.dumps(job).encode("utf-8")), timeout + 60
        )
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise BenchError("the load client did not finish in time") from None
    if process.returncode != 0:
        raise BenchError(f"the load client failed ({process.returncode}): {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out)
    return result


async def measure(
    config: str, s: Settings, streams: int, tmp: Path, db: str | None, redis: str | None
) -> Outcome:
    outcome = Outcome(config, streams)
    async with servers_for(config, s, streams, tmp, db, redis) as servers:
        await warm_up(s, servers)
        job = client_job(s, servers, streams)
        procs = [Proc(server) for server in servers]
        for proc in procs:
            proc.cpu_start = process_cpu_seconds(proc.server.process.pid)
        counters = store_counters(db, redis) if config == "ours2" and db and redis else None
        services_before = service_cpu(db, redis) if counters is not None and db and redis else {}
        ticks, overflows = machine_busy_ticks(), listen_overflows()
        outcome.client = await run_client(job, s.timeout)
        ticks_after, overflows_after = machine_busy_ticks(), listen_overflows()
        if overflows is not None and overflows_after is not None:
            outcome.listen_overflows = overflows_after - overflows
        for proc in procs:
            pid = proc.server.process.pid
            cpu = process_cpu_seconds(pid)
            if cpu is not None and proc.cpu_start is not None:
                proc.cpu_used = cpu - proc.cpu_start
            proc.peak_rss_mb = peak_rss_mb(pid)
        if ticks and ticks_after and ticks_after[1] > ticks[1]:
            outcome.machine_busy = (ticks_after[0] - ticks[0]) / (ticks_after[1] - ticks[1])
        outcome.load = load_average()
        if counters is not None and db and redis:
            after = service_cpu(db, redis)
            used = (v - services_before.get(pid, 0.0) for pid, v in after.items())
            outcome.services_cpu = sum(used)
            outcome.shared = shared_state(counters, store_counters(db, redis), streams)
        outcome.servers = [
            {"url": p.server.url, "cpu": p.cpu_used, "peak_rss_mb": p.peak_rss_mb} for p in procs
        ]
    return outcome


# -- the official adapter, served (``--serve-official``) ------------------------------------------


def serve_official(port: int, s: Settings, responses: int, raw: str | None) -> int:
    """The official adapter's FastAPI endpoint on our graph, under uvicorn, in this process."""
    import uvicorn
    from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
    from fastapi import FastAPI
    from langgraph.checkpoint.memory import InMemorySaver

    from gth_jupyter.agent.graph import build_graph
    from gth_jupyter.models import FakeChatModel

    # As stream_overhead.official_way sets it up, with the token delay of this bench.
    answers = scripted_answers(s, responses)
    model = FakeChatModel(responses=answers, tokenDelayMs=s.delay_ms)
    graph = build_graph(model, [], [], checkpointer=InMemorySaver())
    graph.context_schema = None  # the adapter passes configurable as context; see that bench
    kwargs: dict[str, Any] = {}
    if raw is not None:
        kwargs["emit_raw_events"] = raw == "true"
    agent = LangGraphAgent(name="bench", graph=graph, **kwargs)
    app = FastAPI()
    add_langgraph_fastapi_endpoint(app, agent, RUN_PATH)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")

    class Announced(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            print(f"{OFFICIAL_READY}127.0.0.1:{port}", flush=True)

    Announced(config).run()
    return 0


# -- report --------------------------------------------------------------------------------------


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.1f}"


def ratio(ours: float | None, official: float | None) -> str:
    if ours is None or not official:
        return "-"
    return f"{ours / official:.2f}x"


def total_cpu(o: Outcome) -> float | None:
    values = [srv["cpu"] for srv in o.servers]
    return None if not values or None in values else sum(values)


def total_rss(o: Outcome) -> float | None:
    values = [srv["peak_rss_mb"] for srv in o.servers]
    return None if not values or None in values else sum(values)


def goal_met(o: Outcome) -> bool:
    c = o.client
    p99 = c.get("gap", {}).get("p99")
    return (
        c.get("failed", 1) == 0
        and c.get("completed") == o.streams
        and p99 is not None
        and (p99 < GOAL_GAP_P99)
    )


def report(s: Settings, outcomes: list[Outcome], info: dict[str, Any]) -> list[str]:
    """Prints the table; returns the goal verdicts, one per ours configuration at 200 streams."""
    lines: list[str] = []
    header = (
        f"{'configuration':<36}{'done':>5}{'fail':>5}{'TTFB p50':>9}{'p99':>8}{'gap p50':>8}"
        f"{'p99':>8}{'max':>8}{'wall s':>7}{'srv CPU s':>10}{'peak RSS MB':>12}"
        f"{'client CPU':>11}{'busy':>6}"
    )
    for n in s.streams:
        print()
        print(
            f"N = {n} concurrent streams x {s.tokens} tokens, {s.delay_ms:g} ms token delay "
            "(times in ms unless said; gaps between consecutive SSE frames of a stream)"
        )
        print(header)
        print("-" * len(header))
        rows = [o for o in outcomes if o.streams == n]
        official = next((o for o in rows if o.config == "official" and not o.skipped), None)
        for o in rows:
            if o.skipped:
                print(f"{LABELS[o.config]:<36}skipped: {o.skipped}")
                continue
            c = o.client
            cpu = "+".join("-" if srv["cpu"] is None else f"{srv['cpu']:.1f}" for srv in o.servers)
            rss = "+".join(
                "-" if srv["peak_rss_mb"] is None else f"{srv['peak_rss_mb']:.0f}"
                for srv in o.servers
            )
            client_cpu = f"{c['client_cpu']:.1f}s {c['client_cpu'] / c['wall']:.0%}"
            busy = "-" if o.machine_busy is None else f"{o.machine_busy:.0%}"
            print(
                f"{LABELS[o.config]:<36}{c['completed']:>5}{c['failed']:>5}"
                f"{ms(c['ttfb']['p50']):>9}{ms(c['ttfb']['p99']):>8}{ms(c['gap']['p50']):>8}"
                f"{ms(c['gap']['p99']):>8}{ms(c['gap']['max']):>8}{c['wall']:>7.2f}"
                f"{cpu:>10}{rss:>12}{client_cpu:>11}{busy:>6}"
            )
        for o in rows:
            if o.skipped or not o.client:
                continue
            c = o.client
            if c["failed"]:
                print(
                    f"!!! {LABELS[o.config]}: {c['failed']} of {o.streams} STREAMS LOST OR "
                    f"INCOMPLETE: {json.dumps(c['errors'])}"
                )
            if o.listen_overflows:
                print(
                    f"    {LABELS[o.config]}: {o.listen_overflows} connection(s) overflowed a "
                    "listen queue (accept backlog full; those clients retried after ~1 s)"
                )
            tail = c.get("tail", {})
            print(
                f"    {LABELS[o.config]}: last token to RUN_FINISHED p50 {ms(tail.get('p50'))}, "
                f"p99 {ms(tail.get('p99'))}, max {ms(tail.get('max'))} ms"
            )
            if len(o.servers) > 1:
                print(
                    f"    {LABELS[o.config]}: completed per server {c['per_target_completed']}; "
                    f"{o.shared}; PostgreSQL backends + Redis used {o.services_cpu or 0:.1f} CPU s"
                )
        if official is not None:
            oc = official.client
            for o in rows:
                if o.skipped or o.config == "official" or not o.client:
                    continue
                c = o.client
                print(
                    f"  {LABELS[o.config]} / official: wall {ratio(c['wall'], oc['wall'])}, "
                    f"TTFB p99 {ratio(c['ttfb']['p99'], oc['ttfb']['p99'])}, "
                    f"gap p99 {ratio(c['gap']['p99'], oc['gap']['p99'])}, "
                    f"server CPU {ratio(total_cpu(o), total_cpu(official))}, "
                    f"peak RSS {ratio(total_rss(o), total_rss(official))}"
                )
    print(
        "\nTTFB: connection opened to the first SSE frame. srv CPU s / peak RSS MB: per server "
        "process (+ joins two), CPU over the measured batch,\nRSS the process's peak (VmHWM). "
        "client CPU: the load client's CPU and its share of one core. busy: all CPUs of the "
        "machine during the batch."
    )
    m = info["machine"]
    print(
        f"Machine: {m['cpu_count']} CPUs ({m['cpus_usable']} usable), {m['cpu']}; "
        f"{m['implementation']} {m['python']}; load average {info['load_start']} at start, "
        f"{info['load_end']} at end; services: {info.get('services', '-')}"
    )
    for o in outcomes:
        if o.config != "official" and o.streams == GOAL_STREAMS and not o.skipped:
            gap = o.client.get("gap", {}).get("p99")
            lines.append(
                f"{LABELS[o.config]}: {'met' if goal_met(o) else 'not met'} "
                f"({o.client.get('completed')}/{o.streams} complete, gap p99 {ms(gap)} ms)"
            )
    return lines


# -- capacity ------------------------------------------------------------------------------------


def holds(o: Outcome, limit: float) -> bool:
    """Every stream complete, and the gap p99 under ``limit`` seconds."""
    c = o.client
    p99 = c.get("gap", {}).get("p99")
    return (
        not o.skipped
        and c.get("failed", 1) == 0
        and c.get("completed") == o.streams
        and p99 is not None
        and p99 < limit
    )


#: A level that fails with the machine this busy, and the server under half a core, says more
#: about the machine's other work than about the server (see ``crowded``).
CROWDED_BUSY = 0.9


def crowded(o: Outcome) -> bool:
    """The machine's CPUs were nearly all busy during the level while this server used under
    half a core: the scheduler, not the server, made its clients wait."""
    cpu, wall = total_cpu(o), o.client.get("wall")
    if cpu is None or not wall or o.machine_busy is None:
        return False
    return o.machine_busy >= CROWDED_BUSY and cpu / wall < 0.5


def search(start: int, most: int) -> Generator[int, bool, int]:
    """The levels to try: N doubles from ``start`` while it holds, then the gap between the
    largest level that held and the smallest that did not is bisected to within a tenth (or
    2 streams). Sent whether each level held; returns the largest that held (0: none)."""
    held, failed = 0, None
    n = start
    while failed is None:
        if (yield n):
            held = n
            if n >= most:
                return held
            n = min(n * 2, most)
        else:
            failed = n
    while failed - held > max(2, held // 10):
        n = (held + failed) // 2
        if (yield n):
            held = n
        else:
            failed = n
    return held


async def run_capacity(s: Settings, cap: Capacity, info: dict[str, Any]) -> dict[str, Any]:
    """Each configuration's search, a level of each in turn (so that a change in the machine's
    load touches both alike), on a fresh server process per level."""
    paced = replace(s, tokens=cap.tokens, delay_ms=cap.pace_ms, warmup=1, ramp=cap.ramp)
    print(
        f"capacity: {cap.tokens} tokens per stream, {cap.pace_ms:g} ms between tokens, starts "
        f"spread over {cap.ramp:g} s; a level holds when every stream completes with gap p99 < "
        f"{cap.gap_limit * 1000:.0f} ms; configurations {s.only}; load average "
        f"{info['load_start']}",
        flush=True,
    )
    searches = {config: search(cap.start, cap.most) for config in s.only}
    asked = {config: next(gen) for config, gen in searches.items()}
    found: dict[str, int] = {}
    tried: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="gth-load-") as tmp:
        while asked:
            for config in list(asked):
                n = asked[config]
                ok = False
                for attempt in range(cap.tries):
                    print(f"  {LABELS[config]}: N={n}" + " again" * attempt, flush=True)
                    try:
                        outcome = await measure(config, paced, n, Path(tmp), None, None)
                    except (BenchError, httpx.HTTPError, OSError) as exc:
                        skipped = f"{type(exc).__name__}: {exc}"[:500]
                        outcome = Outcome(config, n, skipped=skipped)
                    tried.append(outcome)
                    ok = holds(outcome, cap.gap_limit)
                    c = outcome.client
                    print(
                        f"    {outcome.skipped or ''}{c.get('completed', 0)}/{n} complete, gap "
                        f"p99 {ms(c.get('gap', {}).get('p99'))} ms: "
                        f"{'holds' if ok else 'does not hold'}",
                        flush=True,
                    )
                    if ok or outcome.skipped:
                        break
                try:
                    asked[config] = searches[config].send(ok)
                except StopIteration as done:
                    found[config] = done.value
                    del asked[config]
    info["load_end"] = load_average()
    report_capacity(cap, tried, found, info)
    return {
        "settings": {**vars(cap), "only": s.only, "warmup": paced.warmup},
        "capacity": found,
        "levels": [vars(o) | {"holds": holds(o, cap.gap_limit)} for o in tried],
        **info,
    }


def report_capacity(
    cap: Capacity, tried: list[Outcome], found: dict[str, int], info: dict[str, Any]
) -> None:
    print()
    print(
        f"Capacity of one server process: {cap.tokens}-token streams at {cap.pace_ms:g} ms "
        f"between tokens, starts spread over {cap.ramp:g} s (times in ms)"
    )
    header = (
        f"{'configuration':<36}{'N':>5}{'done':>6}{'gap p50':>9}{'p99':>8}{'max':>8}"
        f"{'TTFB p99':>9}{'srv CPU s':>10}{'CPU/wall':>9}{'/stream':>8}{'busy':>6}  holds"
    )
    print(header)
    print("-" * len(header))
    for config in found:
        for o in sorted((o for o in tried if o.config == config), key=lambda o: o.streams):
            if o.skipped:
                print(f"{LABELS[config]:<36}{o.streams:>5}  skipped: {o.skipped}")
                continue
            c = o.client
            cpu = total_cpu(o)
            cpu_text = "-" if cpu is None else f"{cpu:.1f}"
            share = "-" if cpu is None else f"{cpu / c['wall']:.0%}"
            each = "-" if cpu is None else f"{cpu / c['wall'] / o.streams:.2%}"
            busy = "-" if o.machine_busy is None else f"{o.machine_busy:.0%}"
            verdict = "yes" if holds(o, cap.gap_limit) else "no"
            if verdict == "no" and crowded(o):
                verdict += " !"
            print(
                f"{LABELS[config]:<36}{o.streams:>5}{c['completed']:>6}{ms(c['gap']['p50']):>9}"
                f"{ms(c['gap']['p99']):>8}{ms(c['gap']['max']):>8}{ms(c['ttfb']['p99']):>9}"
                f"{cpu_text:>10}{share:>9}{each:>8}{busy:>6}  {verdict}"
            )
    print(
        "gap: between consecutive SSE frames of a stream at the client; srv CPU s: the server "
        "process over the level; CPU/wall: its share of one core (/stream: per stream); busy: "
        "all CPUs of the machine.\n! : did not hold while the machine's CPUs were at least "
        f"{CROWDED_BUSY:.0%} busy and this server used under half a core: other work on the "
        "machine, not the server, set those gaps."
    )
    parts = [f"{LABELS[c]}: {n} streams" for c, n in found.items()]
    if "ours1" in found and found.get("official"):
        parts.append(f"ours / official {found['ours1'] / found['official']:.1f}x")
    print(f"\ncapacity (largest N that held): {'; '.join(parts)}")
    print(
        f"Load average {info['load_start']} at start, {info['load_end']} at end; "
        f"{info['machine']['cpu_count']} CPUs, CPython {info['machine']['python']}"
    )


# -- main ----------------------------------------------------------------------------------------


async def run(s: Settings) -> dict[str, Any]:
    info: dict[str, Any] = {
        "machine": machine(),
        "versions": library_versions(),
        "load_start": load_average(),
    }
    if s.official_raw_events is not None:
        LABELS["official"] = f"official (emit_raw_events={str(s.official_raw_events).lower()})"
    if s.capacity is not None:
        return await run_capacity(s, s.capacity, info)
    print(
        f"load: streams {s.streams}, {s.tokens} tokens, {s.delay_ms:g} ms token delay, "
        f"configurations {s.only}; load average {info['load_start']}",
        flush=True,
    )
    outcomes: list[Outcome] = []
    postgres_skip: str | None = None
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory(prefix="gth-load-") as tmp:
        db = redis = None
        if "ours2" in s.only:
            postgres_skip = serve_supports_postgres()
            if postgres_skip is None:
                admin, redis, how = stack.enter_context(services())
                info["services"] = how
                if not admin or not redis:
                    postgres_skip = f"PostgreSQL or Redis is not available ({how})"
                else:
                    try:
                        db = stack.enter_context(fresh_database(admin))
                    except Exception as exc:
                        postgres_skip = f"could not create a database: {exc}"
        for n in s.streams:
            for config in s.only:
                print(f"  N={n}: {LABELS[config]}", flush=True)
                if config == "ours2" and postgres_skip:
                    outcome = Outcome(config, n, skipped=postgres_skip)
                else:
                    try:
                        outcome = await measure(config, s, n, Path(tmp), db, redis)
                    except (BenchError, httpx.HTTPError, OSError) as exc:
                        outcome = Outcome(config, n, skipped=f"{type(exc).__name__}: {exc}"[:500])
                if outcome.skipped:
                    print(f"    skipped: {outcome.skipped}", flush=True)
                else:
                    c = outcome.client
                    print(
                        f"    {c['completed']}/{n} complete, wall {c['wall']:.2f} s, "
                        f"gap p99 {ms(c['gap']['p99'])} ms",
                        flush=True,
                    )
                outcomes.append(outcome)
    info["load_end"] = load_average()
    goals = report(s, outcomes, info)
    if s.profile_server is not None and "ours1" in s.only:
        print_profile(s.profile_server)
    if s.profile_server is not None and "ours2" in s.only:
        print(f"ours2's servers' profiles: {s.profile_server}.ours2-0 and -1 (python -m pstats)")
    if goals:
        met = all(g.split(": ", 1)[1].startswith("met") for g in goals)
        verdict = "met" if met else "not met"
        detail = "; ".join(goals)
    else:
        verdict, detail = "not checked", f"no ours configuration ran with {GOAL_STREAMS} streams"
    print(
        f"\ngoal: {GOAL_STREAMS} streams, none lost, inter-event gap p99 < "
        f"{GOAL_GAP_P99 * 1000:.0f} ms for ours: {verdict} ({detail})"
    )
    return {
        "settings": {
            **{k: v for k, v in vars(s).items() if k != "profile_server"},
            "profile_server": str(s.profile_server) if s.profile_server else None,
        },
        "outcomes": [vars(o) for o in outcomes],
        "goal": {"verdict": verdict, "detail": detail},
        **info,
    }


def parse_args(argv: Sequence[str] | None) -> Settings:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--streams", default="50,200", help="comma-separated N (50,200)")
    parser.add_argument("--tokens", type=int, default=200, help="tokens per stream (200)")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="token delay, ms (5)")
    parser.add_argument("--warmup", type=int, default=2, help="sequential runs per server (2)")
    parser.add_argument("--timeout", type=float, default=180.0, help="per stream, s (180)")
    parser.add_argument(
        "--only", default=",".join(CONFIGS), help=f"configurations ({','.join(CONFIGS)})"
    )
    parser.add_argument(
        "--official-raw-events",
        choices=("true", "false"),
        help="the official adapter's emit_raw_events (default: its own default)",
    )
    parser.add_argument(
        "--profile-server",
        type=Path,
        metavar="PATH",
        help="run our servers under cProfile (CPU time): ours1's stats to PATH (top entries "
        "printed), ours2's to PATH.ours2-0/-1 (use with one N)",
    )
    cap = parser.add_argument_group("capacity (--capacity)")
    cap.add_argument(
        "--capacity",
        action="store_true",
        help="find the most concurrent streams one server process holds (ours1 and official)",
    )
    cap.add_argument("--pace-ms", type=float, default=30.0, help="token delay, ms (30)")
    cap.add_argument("--capacity-tokens", type=int, default=100, help="tokens per stream (100)")
    cap.add_argument("--ramp", type=float, default=1.0, help="starts spread over, s (1)")
    cap.add_argument("--gap-limit-ms", type=float, default=50.0, help="gap p99 limit, ms (50)")
    cap.add_argument("--capacity-start", type=int, default=10, help="first N (10)")
    cap.add_argument("--capacity-max", type=int, default=1024, help="largest N tried (1024)")
    cap.add_argument("--capacity-tries", type=int, default=2, help="tries before a level fails (2)")
    parser.add_argument("--serve-official", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--responses", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_official is not None:
        served = Settings([], args.tokens, args.delay_ms, args.warmup, 0, [], None, None)
        raise SystemExit(
            serve_official(args.serve_official, served, args.responses, args.official_raw_events)
        )
    streams = [int(x) for x in args.streams.split(",") if x.strip()]
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    capacity: Capacity | None = None
    if args.capacity:
        capacity = Capacity(
            pace_ms=args.pace_ms,
            tokens=args.capacity_tokens,
            ramp=args.ramp,
            gap_limit=args.gap_limit_ms / 1000,
            start=args.capacity_start,
            most=args.capacity_max,
            tries=max(1, args.capacity_tries),
        )
        if "--only" not in " ".join(argv if argv is not None else sys.argv):
            only = ["ours1", "official"]
        if "ours2" in only:
            parser.error("--capacity measures one server process: --only ours1,official")
        if min(capacity.tokens, capacity.start) < 1 or capacity.most < capacity.start:
            parser.error("--capacity-tokens, --capacity-start must be >= 1, max >= start")
    unknown = [x for x in only if x not in CONFIGS]
    if unknown:
        parser.error(f"unknown configurations {unknown}; choose from {CONFIGS}")
    if not streams or min(streams) < 1 or args.tokens < 1:
        parser.error("--streams and --tokens must be at least 1")
    raw = None if args.official_raw_events is None else args.official_raw_events == "true"
    return Settings(
        streams=streams,
        tokens=args.tokens,
        delay_ms=args.delay_ms,
        warmup=args.warmup,
        timeout=args.timeout,
        only=only,
        official_raw_events=raw,
        profile_server=args.profile_server.resolve() if args.profile_server else None,
        capacity=capacity,
    )


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt)
    started = time.perf_counter()
    try:
        results = asyncio.run(run(settings))
    except BenchError as exc:
        print(f"load: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("load: interrupted", file=sys.stderr)
        return 130
    results["bench_seconds"] = time.perf_counter() - started
    RESULTS_PATH.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_PATH.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nSaved {RESULTS_PATH} ({results['bench_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
