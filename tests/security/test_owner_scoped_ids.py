"""Thread and run ids are scoped per user on the server, on a real Jupyter server whose identity
provider names users (as JupyterHub's does), on SQLite and on PostgreSQL.

The review's repro: a notebook's thread id is ``nb-`` + a hash of the notebook's path, which
anyone can compute; Bob posting first on Alice's notebook id took the thread, and Alice's widget
then got ``404 thread_not_found``. Bob also learned which run ids were in use: ``409
run_exists`` for Alice's, ``200`` for an unused one. Now the same id from two users names two
threads and two runs; the server's owner keeps the unscoped keys, which the notebook's kernel
(``Session``, the widget's comm) reads and writes in the same store.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tornado.httpclient import HTTPClientError

from gth_jupyter.agui import Requester
from gth_jupyter.agui.owners import scoped_id
from gth_jupyter.agui.request import parse_input
from gth_jupyter.agui.run import ThreadRun
from gth_jupyter.notebook.host.threads import notebook_thread_id
from gth_jupyter.server.host import HOST_KEY
from gth_jupyter.server.identity import server_owner
from tests.sse import frames_of, sse_events
from tests.users import HeaderIdentity

#: Alice runs the server (her notebook, her kernels); Bob is a visitor on it.
ALICE = server_owner()
BOB = "bob"
SLOW = "slow " * 150
#: The model's answers, in call order across every run of a test.
SCRIPT: list[Any] = ["First answer.", "Second answer.", "Third answer.", "Fourth answer."]


@pytest.fixture
def gth_script() -> list[Any]:
    return list(SCRIPT)


@pytest.fixture(params=["sqlite", "postgres"])
def gth_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The extension's store settings: an SQLite file, or a fresh PostgreSQL database (skipped
    without ``GTH_TEST_DATABASE_URL``)."""
    if request.param == "sqlite":
        yield {"checkpointer": "sqlite", "checkpoint_path": str(tmp_path / "threads.sqlite")}
        return
    from tests.services import fresh_database

    for url in fresh_database(request.getfixturevalue("pg_admin_url")):
        yield {"checkpointer": "postgres", "database_url": url, "run_lease_seconds": 5.0}


@pytest.fixture(autouse=True)
def jp_server_cleanup(gth_store: dict[str, Any], jp_server_cleanup: None) -> None:
    """pytest-jupyter's cleanup after ``gth_store``: the server stops (and closes its pool)
    before the database is dropped."""


@pytest.fixture
def gth_config(gth_script: list[Any]) -> dict[str, Any]:
    return {"llm": {"type": "fake", "responses": gth_script}, "builtInTools": []}


@pytest.fixture
def gth_app(gth_store: dict[str, Any]) -> dict[str, Any]:
    return gth_store


@pytest.fixture
def gth_server_app() -> dict[str, Any]:
    return {"identity_provider_class": HeaderIdentity}


def body(thread: str, run: str, text: str, **extra: Any) -> str:
    message = {"id": f"u-{run}-{text[:8]}", "role": "user", "content": text}
    return json.dumps({"threadId": thread, "runId": run, "messages": [message], **extra})


async def as_user(jp_fetch: Any, user: str, *path: str, **kwargs: Any) -> Any:
    headers = {"X-Test-User": user, **kwargs.pop("headers", {})}
    return await jp_fetch("gth", *path, headers=headers, request_timeout=60, **kwargs)


async def run_as(jp_fetch: Any, user: str, thread: str, run: str, text: str) -> list[Any]:
    response = await as_user(
        jp_fetch, user, "agents", "default", "run", method="POST", body=body(thread, run, text)
    )
    assert response.code == 200
    return sse_events(response.body)


async def refused(jp_fetch: Any, user: str, *path: str, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as info:
        await as_user(jp_fetch, user, *path, **kwargs)
    assert info.value.response is not None
    return info.value.code, json.loads(info.value.response.body)["code"]


def contents(view: dict[str, Any]) -> list[Any]:
    return [m.get("content") for m in view["messages"]]


async def view_of(jp_fetch: Any, user: str, thread: str, **params: str) -> dict[str, Any]:
    response = await as_user(jp_fetch, user, "threads", thread, params=params)
    view: dict[str, Any] = json.loads(response.body)
    return view


async def test_a_visitor_posting_first_on_a_notebooks_thread_id_does_not_take_it(
    jp_fetch, jp_serverapp, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The id Alice's notebook derives from its path: anyone can compute it.
    monkeypatch.setenv("JPY_SESSION_NAME", "work/analysis.ipynb")
    notebook = notebook_thread_id()

    bobs = await run_as(jp_fetch, BOB, notebook, "b1", "Bob was here first")
    assert bobs[0]["threadId"] == notebook and bobs[-1]["type"] == "RUN_FINISHED"

    # Alice's widget runs on its notebook's thread as if Bob had never posted (was: 404).
    alices = await run_as(jp_fetch, ALICE, notebook, "a1", "Alice's question")
    assert alices[0]["threadId"] == notebook and alices[-1]["type"] == "RUN_FINISHED"
    assert contents(await view_of(jp_fetch, ALICE, notebook)) == [
        "Alice's question",
        "Second answer.",
    ]
    assert contents(await view_of(jp_fetch, BOB, notebook)) == [
        "Bob was here first",
        "First answer.",
    ]

    # The notebook's kernel (its Session, the widget's comm) reads the same thread, under the
    # bare notebook id, in the same store: Alice's, with nothing of Bob's.
    registry = jp_serverapp.web_app.settings[HOST_KEY].registry
    runtime = await registry.runtime("default")
    kernel_side = await runtime.thread_state(notebook)
    assert [m.content for m in kernel_side.messages] == ["Alice's question", "Second answer."]

    # Each lists the thread as their own, under the id their client sent.
    for user in (ALICE, BOB):
        listed = json.loads((await as_user(jp_fetch, user, "threads")).body)["threads"]
        assert [(t["threadId"], t["owner"]) for t in listed] == [(notebook, user)]


async def test_a_thread_bob_never_used_is_empty_for_him_whoever_uses_its_id(jp_fetch) -> None:
    await run_as(jp_fetch, ALICE, "plans", "a1", "Alice's secret plans")
    seen = await view_of(jp_fetch, BOB, "plans")
    never = await view_of(jp_fetch, BOB, "never-used")
    # Bob learns nothing: Alice's id answers exactly as an id nobody used (was: 404 for hers).
    assert seen == {**never, "threadId": "plans"}
    assert seen["messages"] == []
    grants = json.loads((await as_user(jp_fetch, BOB, "threads", "plans", "grants")).body)
    assert grants == {"grants": []}
    assert contents(await view_of(jp_fetch, ALICE, "plans")) == [
        "Alice's secret plans",
        "First answer.",
    ]


async def test_the_server_owners_ids_never_name_anothers_keys(jp_fetch, jp_serverapp) -> None:
    """An id of the server's owner that looks like another user's scoped key is scoped too."""
    await run_as(jp_fetch, BOB, "x", "b1", "Bob's own")
    key_of_bobs = scoped_id(Requester(BOB, server_owner=ALICE), "x")
    assert key_of_bobs != "x"
    assert scoped_id(Requester(ALICE, server_owner=ALICE), key_of_bobs) != key_of_bobs
    await run_as(jp_fetch, ALICE, key_of_bobs, "a1", "Alice's own")
    model = (await jp_serverapp.web_app.settings[HOST_KEY].registry.runtime("default")).model
    assert "Bob's own" not in str(model.received[-1])  # her run did not see his thread
    assert contents(await view_of(jp_fetch, BOB, "x")) == ["Bob's own", "First answer."]


async def test_the_same_run_id_from_two_users_names_two_runs(
    jp_fetch, jp_serverapp, http_server_client, jp_base_url
) -> None:
    registry = jp_serverapp.web_app.settings[HOST_KEY].registry
    model = (await registry.runtime("default")).model
    model.responses.insert(
        0, model.responses[0].model_copy(update={"content": SLOW, "delay_ms": 4})
    )
    port = http_server_client.get_http_port()
    token = jp_serverapp.identity_provider.token
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}{jp_base_url}gth/",
        headers={"Authorization": f"token {token}"},
        timeout=30,
    ) as http:
        # Alice's run goes on, detached, after her client read its first frames.
        alice = {"X-Test-User": ALICE}
        payload = json.loads(body("alices", "r-1", "go", forwardedProps={"detach": True}))
        async with http.stream(
            "POST", "agents/default/run", json=payload, headers=alice
        ) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data:") and "TEXT_MESSAGE_CONTENT" in line:
                    break
        assert (await http.get("threads/alices", headers=alice)).json()["run"] == {"runId": "r-1"}

        # Bob cannot reach Alice's run by its id, nor stop it ...
        bob = {"X-Test-User": BOB}
        attached = await http.get("runs/r-1/events", headers=bob)
        assert (attached.status_code, attached.json()["code"]) == (404, "run_not_found")
        stopped = await http.delete("runs/r-1", headers=bob)
        assert (stopped.status_code, stopped.json()["code"]) == (404, "run_not_found")

        # ... and his run of the same id is a run of his own (was: 409 run_exists).
        mine = await http.post(
            "agents/default/run", content=body("bobs", "r-1", "mine"), headers=bob
        )
        assert mine.status_code == 200
        events = sse_events(mine.content)
        assert events[0]["threadId"] == "bobs" and events[-1]["type"] == "RUN_FINISHED"
        again = frames_of((await http.get("runs/r-1/events", headers=bob)).text)
        assert [json.loads(f["data"]) for f in again if "data" in f] == events

        # Alice's run went on untouched, and replays to her as her own.
        for _ in range(400):
            if not (await http.get("threads/alices", headers=alice)).json()["busy"]:
                break
            await asyncio.sleep(0.05)
        hers = sse_events((await http.get("runs/r-1/events", headers=alice)).content)
        assert hers[0]["threadId"] == "alices" and hers[-1]["type"] == "RUN_FINISHED"
        text = "".join(e.get("delta", "") for e in hers if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert text == SLOW


async def test_an_admin_reads_a_users_thread_by_naming_its_owner(jp_fetch, jp_serverapp) -> None:
    jp_serverapp.web_app.settings[HOST_KEY].admin_users = frozenset({"carol"})
    await run_as(jp_fetch, BOB, "t", "b1", "Bob's question")
    everything = json.loads(
        (await as_user(jp_fetch, "carol", "threads", params={"all": "true"})).body
    )
    assert [(t["threadId"], t["owner"]) for t in everything["threads"]] == [("t", BOB)]
    read = await view_of(jp_fetch, "carol", "t", owner=BOB)
    assert contents(read) == ["Bob's question", "First answer."]
    assert (await view_of(jp_fetch, "carol", "t"))["messages"] == []  # her own "t": none
    # Naming an owner is for reading, by an admin.
    assert await refused(jp_fetch, ALICE, "threads", "t", params={"owner": BOB}) == (
        404,
        "thread_not_found",
    )
    # A run by the admin on the same id is a thread of her own; Bob's is untouched.
    await run_as(jp_fetch, "carol", "t", "c1", "Carol's question")
    assert contents(await view_of(jp_fetch, "carol", "t", owner=BOB)) == [
        "Bob's question",
        "First answer.",
    ]


async def test_threads_from_before_scoping_stay_their_owners(jp_fetch, jp_serverapp) -> None:
    """Before scoping every key was the bare id: a thread the kernel wrote (never indexed) is
    the server owner's, and one Bob made (indexed as his) is still found by Bob alone."""
    runtime = await jp_serverapp.web_app.settings[HOST_KEY].registry.runtime("default")
    for thread, text in (("old-kernel", "from the kernel"), ("old-bob", "Bob, long ago")):
        request = parse_input(body(thread, f"r-{thread}", text).encode())
        run = ThreadRun(runtime, request)  # with no requester, as a notebook's Session runs
        await run.plan()
        assert [e.type async for e in run.events()][-1] == "RUN_FINISHED"
    await runtime.threads.claim("old-bob", BOB)

    assert contents(await view_of(jp_fetch, ALICE, "old-kernel"))[0] == "from the kernel"
    assert contents(await view_of(jp_fetch, BOB, "old-bob"))[0] == "Bob, long ago"
    assert (await view_of(jp_fetch, BOB, "old-kernel"))["messages"] == []
    assert await refused(jp_fetch, ALICE, "threads", "old-bob") == (404, "thread_not_found")
    # Bob goes on in his old thread.
    await run_as(jp_fetch, BOB, "old-bob", "b2", "and now")
    assert contents(await view_of(jp_fetch, BOB, "old-bob"))[-2:] == ["and now", "Third answer."]
