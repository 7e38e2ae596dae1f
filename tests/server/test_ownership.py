"""Threads belong to the user who created them, on a real Jupyter server whose identity
provider names users (as JupyterHub's does): another user sending the same id gets a thread of
their own (ids are scoped per user, see ``gth_jupyter.agui.owners``) and lists only their own
threads."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider
from tornado.httpclient import HTTPClientError

from gth_jupyter.server.host import HOST_KEY
from tests.sse import sse_events
from tests.users import HeaderIdentity


@pytest.fixture
def gth_script() -> list[Any]:
    return ["One.", "Two.", "Three.", "Four.", "Five."]


@pytest.fixture
def gth_server_app() -> dict[str, Any]:
    return {"identity_provider_class": HeaderIdentity}


def body(thread: str, run: str, text: str = "hi") -> str:
    return json.dumps(
        {
            "threadId": thread,
            "runId": run,
            "messages": [{"id": f"u-{run}", "role": "user", "content": text}],
        }
    )


async def as_user(jp_fetch: Any, user: str, *path: str, **kwargs: Any) -> Any:
    headers = {"X-Test-User": user, **kwargs.pop("headers", {})}
    return await jp_fetch("gth", *path, headers=headers, **kwargs)


async def refused(jp_fetch: Any, user: str, *path: str, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(HTTPClientError) as info:
        await as_user(jp_fetch, user, *path, **kwargs)
    response = info.value.response
    assert response is not None
    return info.value.code, json.loads(response.body)["code"]


async def test_another_user_cannot_list_read_run_or_resume_a_thread(jp_fetch) -> None:
    run = await as_user(
        jp_fetch, "alice", "agents", "default", "run", method="POST", body=body("a1", "r1")
    )
    assert sse_events(run.body)[-1]["type"] == "RUN_FINISHED"

    listed = json.loads((await as_user(jp_fetch, "alice", "threads")).body)["threads"]
    assert [t["threadId"] for t in listed] == ["a1"] and listed[0]["owner"] == "alice"
    assert json.loads((await as_user(jp_fetch, "bob", "threads")).body) == {"threads": []}

    # Bob learns nothing: "a1" is, for him, a thread he never used.
    view = json.loads((await as_user(jp_fetch, "bob", "threads", "a1")).body)
    assert view["messages"] == [] and not view["busy"]
    grants = json.loads((await as_user(jp_fetch, "bob", "threads", "a1", "grants")).body)
    assert grants == {"grants": []}
    # His resume answers nothing there; his new turn starts a thread "a1" of his own.
    entry = {"interruptId": "x", "status": "resolved"}
    resume = json.dumps({"threadId": "a1", "runId": "r3", "messages": [], "resume": [entry]})
    refusal = await refused(jp_fetch, "bob", "agents", "default", "run", method="POST", body=resume)
    assert refusal == (409, "no_pending_interrupt")
    again = body("a1", "r2", "and now?")
    await as_user(jp_fetch, "bob", "agents", "default", "run", method="POST", body=again)
    view = json.loads((await as_user(jp_fetch, "bob", "threads", "a1")).body)
    assert [m.get("content") for m in view["messages"]] == ["and now?", "Two."]
    # ... nor can he attach to Alice's run by its id.
    assert await refused(jp_fetch, "bob", "runs", "r1", "events") == (404, "run_not_found")

    # Alice's thread is untouched, and Bob's own threads work beside it.
    view = json.loads((await as_user(jp_fetch, "alice", "threads", "a1")).body)
    assert [m.get("content") for m in view["messages"]] == ["hi", "One."]
    await as_user(jp_fetch, "bob", "agents", "default", "run", method="POST", body=body("b1", "r4"))
    assert [
        t["threadId"]
        for t in json.loads((await as_user(jp_fetch, "bob", "threads")).body)["threads"]
    ] == ["b1", "a1"]
    assert [
        t["threadId"]
        for t in json.loads((await as_user(jp_fetch, "alice", "threads")).body)["threads"]
    ] == ["a1"]


async def test_the_listing_puts_the_latest_used_thread_first(jp_fetch) -> None:
    for thread, run in (("first", "r1"), ("second", "r2"), ("first", "r3")):
        await as_user(
            jp_fetch, "alice", "agents", "default", "run", method="POST", body=body(thread, run)
        )
    listed = json.loads((await as_user(jp_fetch, "alice", "threads")).body)["threads"]
    assert [t["threadId"] for t in listed] == ["first", "second"]
    assert all(t["createdAt"] <= t["updatedAt"] for t in listed)


async def test_an_admin_may_read_but_not_run_on_anothers_thread(jp_fetch, jp_serverapp) -> None:
    jp_serverapp.web_app.settings[HOST_KEY].admin_users = frozenset({"carol"})
    await as_user(
        jp_fetch, "alice", "agents", "default", "run", method="POST", body=body("a1", "r1")
    )
    # An admin names the owner of the thread to read (ids are scoped per user).
    read = await as_user(jp_fetch, "carol", "threads", "a1", params={"owner": "alice"})
    view = json.loads(read.body)
    assert view["messages"][0]["content"] == "hi"
    everything = json.loads(
        (await as_user(jp_fetch, "carol", "threads", params={"all": "true"})).body
    )
    assert [t["owner"] for t in everything["threads"]] == ["alice"]
    assert json.loads((await as_user(jp_fetch, "carol", "threads")).body) == {"threads": []}
    # Her run on "a1" is on a thread of her own; Alice's is untouched.
    await as_user(
        jp_fetch, "carol", "agents", "default", "run", method="POST", body=body("a1", "r2")
    )
    read = await as_user(jp_fetch, "carol", "threads", "a1", params={"owner": "alice"})
    assert [m.get("content") for m in json.loads(read.body)["messages"]] == ["hi", "One."]
    # Only an admin may name another owner.
    assert await refused(jp_fetch, "bob", "threads", "a1", params={"owner": "alice"}) == (
        404,
        "thread_not_found",
    )
    # Without the admin role, ?all=true lists one's own threads only.
    mine = json.loads((await as_user(jp_fetch, "bob", "threads", params={"all": "true"})).body)
    assert mine == {"threads": []}


async def test_anonymous_jupyter_logins_share_the_servers_threads(jp_fetch, jp_serverapp) -> None:
    """With Jupyter's own token login every request is a fresh anonymous user: the server's
    owner owns every thread, so a thread made by one request is readable by the next."""
    jp_serverapp.identity_provider.__class__ = IdentityProvider
    await jp_fetch("gth", "agents", "default", "run", method="POST", body=body("t", "r1"))
    view = json.loads((await jp_fetch("gth", "threads", "t")).body)
    assert [m["role"] for m in view["messages"]] == ["user", "assistant"]
    assert [
        t["threadId"] for t in json.loads((await jp_fetch("gth", "threads")).body)["threads"]
    ] == ["t"]


async def test_one_users_session_grant_never_covers_anothers_threads(
    jp_fetch, jp_serverapp
) -> None:
    registry = jp_serverapp.web_app.settings[HOST_KEY].registry
    await as_user(
        jp_fetch, "alice", "agents", "default", "run", method="POST", body=body("a1", "r1")
    )
    await as_user(jp_fetch, "bob", "agents", "default", "run", method="POST", body=body("b1", "r2"))
    granted = registry.grants.add("session", "a1", ("shell", "ls"), "run_shell_command", "alice")
    assert registry.grants.match("b1", ("shell", "ls"), "bob") is None
    assert registry.grants.match("a2", ("shell", "ls"), "alice") is granted
    alices = json.loads((await as_user(jp_fetch, "alice", "threads", "a1", "grants")).body)
    assert [g["id"] for g in alices["grants"]] == [granted.id]
    bobs = json.loads((await as_user(jp_fetch, "bob", "threads", "b1", "grants")).body)
    assert bobs == {"grants": []}
    assert await refused(jp_fetch, "bob", "grants", granted.id, method="DELETE") == (
        404,
        "grant_not_found",
    )
    deleted = await as_user(jp_fetch, "alice", "grants", granted.id, method="DELETE")
    assert deleted.code == 204
