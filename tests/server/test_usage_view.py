"""Usage (issue 19): every run reports its model calls' tokens in ``RUN_FINISHED.usage`` (and
``RUN_ERROR.usage``), with their cost in ``metadata.gth.cost``; the thread keeps them, so
``GET gth/threads/{id}`` gives each turn's usage and the thread's total (every branch counted)
after a restart and from another server on PostgreSQL.

The scripted model reports the counts each response scripts (``usage``); a response without
them estimates its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.agui import thread_view
from gth_jupyter.config import load_config
from gth_jupyter.store import CheckpointStore
from tests.helpers import run_input
from tests.sse import sse_events

STORES = pytest.mark.parametrize("gth_checkpointer", ["memory", "postgres"], indirect=True)


def scripted(text: str, inputs: int, outputs: int, cached: int = 0) -> dict[str, Any]:
    usage = {"inputTokens": inputs, "outputTokens": outputs, "cachedInputTokens": cached}
    return {"content": text, "usage": usage}


RESPONSES = [
    {
        "toolCalls": [{"name": "list_directory", "args": {"path": "."}}],
        "usage": {"inputTokens": 1000, "outputTokens": 20},
    },
    scripted("Two files.", 1100, 30, cached=1000),
    scripted("Second answer.", 1300, 40),
    scripted("Replacement.", 900, 10),
]
PRICED = {"fake": {"scripted": {"inputPerMTok": 3.0, "outputPerMTok": 15.0}}}


@pytest.fixture
def gth_config() -> dict[str, Any]:
    return {
        "llm": {"type": "fake", "responses": RESPONSES},
        "filesystem": "read",
    }


async def post(jp_fetch: Any, run_id: str, text: str, **extra: Any) -> list[dict[str, Any]]:
    body = json.dumps(run_input("u", run_id, text, **extra))
    answer = await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
    return sse_events(answer.body)


async def view(jp_fetch: Any) -> dict[str, Any]:
    return dict(json.loads((await jp_fetch("gth", "threads", "u")).body))


def counts(usage: list[dict[str, Any]]) -> tuple[int, int, int]:
    (only,) = usage
    return only["inputTokens"], only["outputTokens"], only["cachedInputTokens"]


@STORES
async def test_each_run_reports_its_calls_and_the_thread_keeps_every_turns_account(
    jp_fetch: Any,
) -> None:
    first = await post(jp_fetch, "r1", "What is here?", forwardedProps={"gth": {"turnId": "c1"}})
    finished = first[-1]
    assert finished["type"] == "RUN_FINISHED"
    (usage,) = finished["usage"]  # the tool call and the answer: two calls, one model
    assert (usage["provider"], usage["model"]) == ("fake", "scripted")
    assert counts(finished["usage"]) == (2100, 50, 1000)
    assert usage["totalTokens"] == 2150
    assert finished["metadata"]["gth"]["cost"] == {"usd": 0.0, "source": "offline"}
    second = await post(jp_fetch, "r2", "And?")  # a plain client: no turn id
    assert counts(second[-1]["usage"]) == (1300, 40, 0)

    shown = await view(jp_fetch)
    assert [(t["turnId"], t["runId"]) for t in shown["turns"]] == [("c1", "r1"), (None, "r2")]
    assert [counts(t["usage"]) for t in shown["turns"]] == [(2100, 50, 1000), (1300, 40, 0)]
    assert counts(shown["usage"]) == (3400, 90, 1000)

    # A branch from the first run: the current branch's turns are r1's and r3's, but the
    # thread's total still counts what r2 spent.
    third = await post(jp_fetch, "r3", "Instead?", parentRunId="r1")
    assert counts(third[-1]["usage"]) == (900, 10, 0)
    shown = await view(jp_fetch)
    assert [t["runId"] for t in shown["turns"]] == ["r1", "r3"]
    assert counts(shown["usage"]) == (4300, 100, 1000)


@pytest.mark.parametrize(
    "gth_config",
    [
        {
            "llm": {
                "type": "fake",
                "responses": [
                    {"toolCalls": [{"name": "list_directory", "args": {"path": "."}}]},
                    {"content": "Half an answer", "error": "the provider went away"},
                ],
            },
            "filesystem": "read",
        }
    ],
)
async def test_a_failed_run_reports_the_calls_it_made(jp_fetch: Any) -> None:
    events = await post(jp_fetch, "r1", "What is here?")
    failed = events[-1]
    assert failed["type"] == "RUN_ERROR"
    (usage,) = failed["usage"]  # the first call's (estimated); the failed call reported none
    assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0


@pytest.mark.parametrize(
    "gth_config",
    [{"llm": {"type": "fake", "responses": RESPONSES}, "filesystem": "read", "pricing": PRICED}],
)
async def test_a_configured_price_gives_the_run_and_the_thread_a_cost(jp_fetch: Any) -> None:
    events = await post(jp_fetch, "r1", "Go", forwardedProps={"gth": {"turnId": "c1"}})
    cost = events[-1]["metadata"]["gth"]["cost"]
    usd = (2100 * 3.0 + 50 * 15.0) / 1_000_000
    assert cost["source"] == "config" and cost["usd"] == pytest.approx(usd)
    shown = await view(jp_fetch)
    assert shown["cost"]["usd"] == pytest.approx(usd)
    assert shown["turns"][0]["cost"]["usd"] == pytest.approx(usd)


async def test_the_account_outlives_the_server_and_reads_from_another(
    tmp_path: Path, pg_url: str
) -> None:
    """Two registries on one PostgreSQL: what one ran, the other reads; a new one after the
    first closed (a restart) reads the same."""
    (tmp_path / ".gsloth.config.json").write_text(
        json.dumps({"llm": {"type": "fake", "responses": RESPONSES}, "filesystem": "read"})
    )

    def registry() -> AgentRegistry:
        config = load_config(cwd=tmp_path, home=tmp_path)
        store = CheckpointStore("postgres", url=pg_url)
        return AgentRegistry(config, command="notebook", store=store, cwd=tmp_path)

    first, other = registry(), registry()
    try:
        from tests.conftest import run_events

        runtime = await first.runtime()
        payload = json.dumps(run_input("kept", "k1", "What is here?")).encode()
        await run_events(runtime, payload)
        seen = await thread_view(await other.runtime(), "kept")
        assert counts(seen["usage"]) == (2100, 50, 1000)
    finally:
        await first.close()
        await other.close()
    again = registry()
    try:
        seen = await thread_view(await again.runtime(), "kept")
        assert counts(seen["turns"][0]["usage"]) == (2100, 50, 1000)
    finally:
        await again.close()
