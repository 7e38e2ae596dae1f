"""Run journals live within a memory budget, per process and per user.

The review's repro: journals allowed 16 MiB per run, kept 600 s after the run, with no limit on
runs; 20 runs with a 4.5 MB ``state`` each kept 180 MB (RSS 660 MB) after they had ended (each
run journaled the state twice: echoed at its start, and again, unchanged, at its end). Here a
real ``gth-jupyter serve`` runs the same 20 runs with its default budgets (64 MiB per process,
16 MiB per user): its resident memory stays under 300 MB, and the oldest runs, whose events
were dropped, answer ``410 events_expired`` (JSON) to a client re-attaching.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gth_jupyter.runs import LocalJournals
from gth_jupyter.server.host import HOST_KEY
from tests.helpers import free_port
from tests.sse import sse_events

TOKEN = "budget-test-token-0123456789"
RUNS = 20
RSS_LIMIT_MB = 300

pytestmark = pytest.mark.timeout(600)


def rss_mb(pid: int) -> int:
    """The process's resident set, read from ``/proc/<pid>/status`` (``VmRSS``, in kB)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``gth-jupyter serve`` on an SQLite store with the offline demo model (which, unlike the
    scripted test model, keeps nothing of the prompts it was sent), default budgets."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"llm": {"type": "demo", "tokenDelayMs": 0}}))
    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path), "GTH_JUPYTER_TOKEN": TOKEN}
    command = [sys.executable, "-m", "gth_jupyter.server.cli", "serve", "--port", str(port)]
    command += ["-c", str(config), "--checkpoint-path", str(tmp_path / "threads.sqlite")]
    proc = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    banner = proc.stdout.readline()
    assert "AG-UI server on" in banner, banner
    yield proc, f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=30)


def large_state() -> dict[str, Any]:
    """About 4.5 MB of JSON, as many small rows (a table a notebook shares with the agent)."""
    rows = [{"row": i, "label": f"item {i:06d}", "value": i * 0.5} for i in range(78_000)]
    state = {"rows": rows}
    assert 4_400_000 < len(json.dumps(state)) < 5_000_000
    return state


def test_twenty_runs_with_a_large_state_end_under_300_mb_and_the_oldest_expire(server) -> None:
    proc, base = server
    headers = {"Authorization": f"token {TOKEN}"}
    state = large_state()
    with httpx.Client(base_url=base, headers=headers, timeout=120) as http:
        for n in range(RUNS):
            payload = {
                "threadId": f"t{n}",
                "runId": f"r{n}",
                "state": state,
                "messages": [{"id": f"u{n}", "role": "user", "content": "hello"}],
            }
            response = http.post("/gth/agents/default/run", json=payload)
            assert response.status_code == 200, response.text[:300]
            events = sse_events(response.content)
            assert events[-1]["type"] == "RUN_FINISHED"
            assert events[1] == {"type": "STATE_SNAPSHOT", "snapshot": state}  # the echo
        rss = rss_mb(proc.pid)
        print(f"server RSS after {RUNS} runs: {rss} MB")
        assert rss < RSS_LIMIT_MB, f"the server holds {rss} MB after {RUNS} runs"

        # The oldest runs' events went to keep within the budget: 410 (JSON), not a 404 ...
        expired = http.get("/gth/runs/r0/events")
        assert expired.status_code == 410
        assert expired.json()["code"] == "events_expired"
        again = {"threadId": "t0", "runId": "r0", "messages": []}
        posted = http.post("/gth/agents/default/run", json=again)  # re-attach by posting
        assert (posted.status_code, posted.json()["code"]) == (410, "events_expired")
        # ... while the latest run still replays whole, both state snapshots included.
        latest = sse_events(http.get(f"/gth/runs/r{RUNS - 1}/events").content)
        snapshots = [e for e in latest if e["type"] == "STATE_SNAPSHOT"]
        assert snapshots == [{"type": "STATE_SNAPSHOT", "snapshot": state}] * 2
        assert latest[-1]["type"] == "RUN_FINISHED"
        # The thread itself keeps everything.
        assert http.get("/gth/threads/t0").json()["state"] == state


@pytest.fixture
def gth_app() -> dict[str, Any]:
    return {
        "checkpointer": "memory",
        "journal_budget_bytes": 5_000_000,
        "journal_user_budget_bytes": 1_000_000,
    }


def test_the_extensions_budgets_are_settings(jp_serverapp) -> None:
    journals = jp_serverapp.web_app.settings[HOST_KEY].runs.journals
    assert isinstance(journals, LocalJournals)
    assert (journals.budget_bytes, journals.user_budget_bytes) == (5_000_000, 1_000_000)
    assert journals.max_bytes == 1_000_000  # no run keeps more than a user may


def test_the_standalone_servers_budgets_are_options() -> None:
    from gth_jupyter.server.cli import _parser

    args = _parser().parse_args(
        ["serve", "--journal-budget-bytes", "5000000", "--journal-user-budget-bytes", "1000000"]
    )
    assert (args.journal_budget_bytes, args.journal_user_budget_bytes) == (5_000_000, 1_000_000)
    defaults = _parser().parse_args(["serve"])
    assert (defaults.journal_budget_bytes, defaults.journal_user_budget_bytes) == (
        64 * 1024 * 1024,
        16 * 1024 * 1024,
    )
