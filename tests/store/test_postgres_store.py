"""The PostgreSQL store on a real server: setup races, the thread index, strict msgpack."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import ormsgpack
import psycopg
import pytest
import pytest_asyncio
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_POS_ARGS, JsonPlusSerializer
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import load_config
from gth_jupyter.store import CheckpointStore, MemoryThreads, SqliteThreads, ThreadIndex
from gth_jupyter.store.postgres import OpenedPostgres, open_postgres
from tests.conftest import CAMERA_TOOL, body, run_events


@pytest_asyncio.fixture
async def opened(pg_url: str) -> AsyncIterator[OpenedPostgres]:
    store = await open_postgres(pg_url, lease_seconds=2)
    yield store
    await store.close()


async def test_servers_starting_together_all_set_the_database_up(pg_url: str) -> None:
    # LangGraph's own setup() raises UniqueViolation for all but one of these (and its
    # CREATE INDEX CONCURRENTLY deadlocks with a server blocked on a plain advisory lock).
    stores = await asyncio.wait_for(
        asyncio.gather(*(open_postgres(pg_url, lease_seconds=2) for _ in range(4))), 90
    )
    try:
        assert await stores[3].threads.claim("t", "alice") == "alice"
        assert await stores[0].threads.owner("t") == "alice"
    finally:
        for store in stores:
            await store.close()
    with psycopg.connect(pg_url) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
    assert {"checkpoints", "checkpoint_blobs", "gth_threads", "gth_run_leases"} <= tables


@pytest_asyncio.fixture(params=["memory", "sqlite", "postgres"])
async def index(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ThreadIndex]:
    if request.param == "memory":
        yield MemoryThreads()
    elif request.param == "sqlite":
        import aiosqlite

        async with aiosqlite.connect(str(tmp_path / "t.sqlite")) as conn:
            threads = SqliteThreads(conn)
            await threads.setup()
            yield threads
    else:
        store = await open_postgres(request.getfixturevalue("pg_url"), lease_seconds=2)
        yield store.threads
        await store.close()


async def test_the_thread_index_contract(index: ThreadIndex) -> None:
    assert await index.owner("a") is None and await index.list(None) == []
    assert await index.claim("a", "alice") == "alice"
    await asyncio.sleep(0.01)  # distinct timestamps, for the order
    assert await index.claim("b", "bob") == "bob"
    await asyncio.sleep(0.01)
    assert await index.claim("a", "mallory") == "alice"  # the first owner stays
    assert await index.owner("a") == "alice"
    everything = await index.list(None)
    assert [r.thread_id for r in everything] == ["a", "b"]  # latest used first
    (mine,) = await index.list("alice")
    assert mine.owner == "alice" and mine.created_at < mine.updated_at
    assert mine.to_json()["updatedAt"].endswith("+00:00")  # ISO, UTC
    assert await index.list("nobody") == []


async def test_the_run_index_keeps_each_run_once_in_order(index: ThreadIndex) -> None:
    """The runs of a thread with the run each started from (issue 18's branches)."""
    from gth_jupyter.store import RunRecord

    assert list(await index.runs("a")) == []
    await index.add_run(
        "a", RunRecord("r1", "", "turn-1", "cell-1", "2026-12-07T10:00:00.000+00:00")
    )
    await index.add_run("a", RunRecord("r2", "r1", "turn-2", "", "2026-12-07T10:00:01.000+00:00"))
    await index.add_run("a", RunRecord("r1", "other", "x", "y", "2026-12-07T10:00:02.000+00:00"))
    await index.add_run("b", RunRecord("r1", "", "", "", "2026-12-07T10:00:03.000+00:00"))
    runs = list(await index.runs("a"))
    assert [(r.run_id, r.parent_run_id, r.turn_id, r.cell_id) for r in runs] == [
        ("r1", "", "turn-1", "cell-1"),  # a run recorded again keeps its first record
        ("r2", "r1", "turn-2", ""),
    ]
    assert all(r.created_at for r in runs)
    assert [r.run_id for r in await index.runs("b")] == ["r1"]


async def test_the_model_call_records_are_kept_once_per_message(index: ThreadIndex) -> None:
    """What each model call was sent (issue 19), by the assistant message it answered with."""
    assert await index.model_calls("a", ["m1"]) == {}
    await index.add_model_calls("a", {"m1": '{"n": 1}', "m2": '{"n": 2}'})
    await index.add_model_calls("a", {"m1": '{"n": "again"}'})  # a record kept stays
    await index.add_model_calls("b", {"m1": '{"n": "b"}'})
    await index.add_model_calls("a", {})
    assert await index.model_calls("a", ["m2", "m1", "m9"]) == {"m1": '{"n": 1}', "m2": '{"n": 2}'}
    assert await index.model_calls("b", ["m1"]) == {"m1": '{"n": "b"}'}
    many = {f"x{i}": "{}" for i in range(1200)}  # past SQLite's bound-parameter limit
    await index.add_model_calls("c", many)
    assert len(await index.model_calls("c", list(many))) == 1200


async def test_a_whole_thread_round_trips_with_only_allowed_types(
    pg_url: str, tmp_path: Path
) -> None:
    """A client tool answered with an image, an approval, shared state: all reload from a
    fresh store with strict msgpack, and nothing was blocked or merely tolerated."""
    shell = {"name": "run_shell_command", "args": {"command": "echo ok"}}
    state_call = {"name": "gth_update_state", "args": {"state": {"servings": 4}}}
    config = {
        "llm": {
            "type": "fake",
            "responses": [
                {"content": "Smile!", "toolCalls": [{"name": "capture_image"}]},
                {"content": "Noted.", "toolCalls": [state_call]},
                {"toolCalls": [shell]},
                "Finished.",
            ],
        },
        "builtInTools": ["run_shell_command", "gth_update_state"],
        "approvals": "manual",
    }
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(config))
    events: list[dict[str, Any]] = []
    unregister = register_serde_event_listener(lambda e: events.append(dict(e)))

    def registry() -> AgentRegistry:
        store = CheckpointStore("postgres", url=pg_url, lease_seconds=2)
        cfg = load_config(cwd=tmp_path, home=tmp_path)
        return AgentRegistry(cfg, command="notebook", store=store, cwd=tmp_path)

    first = registry()
    try:
        runtime = await first.runtime()
        history: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "photo"}]
        state = {"recipe": "soup"}
        out = await run_events(runtime, body("t", "r1", history, tools=[CAMERA_TOOL], state=state))
        (pending,) = out[-1]["outcome"]["pendingToolCallIds"]
        image = {"mimeType": "image/png", "data": "iVBORw0KGgo="}
        resume = [{"interruptId": pending, "status": "resolved", "payload": image}]
        out = await run_events(
            runtime, body("t", "r2", history, tools=[CAMERA_TOOL], resume=resume)
        )
        (approval,) = out[-1]["outcome"]["interrupts"]
        resume = [
            {"interruptId": approval["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        out = await run_events(
            runtime, body("t", "r3", history, tools=[CAMERA_TOOL], resume=resume)
        )
        assert out[-1]["type"] == "RUN_FINISHED", out[-1]
        before = await runtime.thread_state("t")
    finally:
        await first.close()
    second = registry()
    try:
        after = await (await second.runtime()).thread_state("t")
    finally:
        await second.close()
        unregister()
    assert [m.model_dump() for m in after.messages] == [m.model_dump() for m in before.messages]
    assert after.state == before.state == {"recipe": "soup", "servings": 4}
    kinds = [m.type for m in after.messages]
    assert kinds.count("tool") == 3 and kinds[-1] == "ai"
    assert events == []  # no type blocked, none let through unlisted


def forged(command: str) -> bytes:
    """Msgpack for ``os.system(command)``, as LangGraph's decoder reads a constructor call."""
    call = ormsgpack.packb(["os", "system", [command]])
    return ormsgpack.packb(ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, call))


class _Forger(JsonPlusSerializer):
    """Writes a row as an attacker with write access to the database would."""

    def __init__(self, payload: bytes) -> None:
        super().__init__()
        self.payload = payload

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if obj == ["forged"]:
            return "msgpack", self.payload
        return super().dumps_typed(obj)


async def test_a_forged_row_naming_a_callable_is_not_executed(
    opened: OpenedPostgres, pg_url: str, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    payload = forged(f"touch {marker}")
    config = {"configurable": {"thread_id": "forged", "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": ["forged"]}
    checkpoint["channel_versions"] = {"messages": 1}
    kwargs = {"autocommit": True, "prepare_threshold": None, "row_factory": dict_row}
    async with AsyncConnectionPool(pg_url, kwargs=kwargs, open=False) as pool:
        forger = AsyncPostgresSaver(pool, serde=_Forger(payload))
        await forger.aput(config, checkpoint, {}, {"messages": 1})
        loaded = await opened.saver.aget_tuple(config)
        assert loaded is not None
        assert loaded.checkpoint["channel_values"]["messages"] == [f"touch {marker}"]
        assert not marker.exists()
        # The same row through LangGraph's permissive default does run it: the forgery is real.
        permissive = AsyncPostgresSaver(
            pool, serde=JsonPlusSerializer(allowed_msgpack_modules=True)
        )
        await permissive.aget_tuple(config)
    assert marker.exists()
