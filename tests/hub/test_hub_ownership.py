"""Threads belong to the person who started them, also on a server shared through JupyterHub.

A real JupyterHub (see ``hub_harness``): ``a`` starts a thread on their own server, then shares
that server with ``b`` (JupyterHub 5+ shares, ``POST /hub/api/shares/a/``). ``b``, with a token
of their own, can use ``a``'s server but sees none of ``a``'s threads there: not in the list,
and ``a``'s thread id names, for ``b``, a thread of ``b``'s own (ids are scoped per user), empty
until ``b`` runs on it, which leaves ``a``'s untouched. ``b`` starts and lists threads of their
own there, which ``a`` does not see either. The owner of a thread is the Hub user who sent the
request (``current_user.username``), not the server's owner (``JUPYTERHUB_USER``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hub_harness import ADMIN, Hub, reply_of

from tests.sse import sse_events

pytestmark = pytest.mark.timeout(300)

SERVER = "user/a/gth"  # a's server, through the Hub's proxy


def run(hub: Hub, token: str, thread_id: str, text: str, **extra: Any) -> httpx.Response:
    return hub.run("a", token, thread_id, text, **extra)


def finished_run(hub: Hub, token: str, thread_id: str, text: str) -> list[dict[str, Any]]:
    response = run(hub, token, thread_id, text)
    assert response.status_code == 200, response.text
    events = sse_events(response.text)
    assert events[-1]["type"] == "RUN_FINISHED", events[-3:]
    deltas = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(deltas) == reply_of("a")  # a's server answers, whoever asks
    return events


def threads(hub: Hub, token: str) -> list[dict[str, Any]]:
    response = hub.request("GET", f"{SERVER}/threads", token)
    assert response.status_code == 200, response.text
    listed = response.json()["threads"]
    assert isinstance(listed, list)
    return listed


def refusal(response: httpx.Response) -> tuple[int, str]:
    try:
        code = response.json().get("code", "")
    except ValueError:
        code = f"(not JSON) {response.text[:200]}"
    return response.status_code, code


@dataclass
class Shared:
    """``a``'s server after ``a`` started a thread on it and shared it with ``b``."""

    hub: Hub
    a_token: str
    b_token: str
    a_thread: str


@pytest.fixture(scope="module")
def shared(hub: Hub) -> Shared:
    a_token = hub.users["a"].token
    a_thread = f"a-{uuid.uuid4().hex[:8]}"
    finished_run(hub, a_token, a_thread, "a's secret plans")

    # Before the share, b's server access stops at the Hub's door. (A token of its own: the
    # server caches what the Hub says about a token for minutes.)
    before = hub.new_token("b", note="before the share")
    response = hub.request("GET", f"{SERVER}/health", before)
    assert response.status_code == 403, (response.status_code, response.text)

    # a shares the server with b, with a's own token (the user role allows shares!user).
    share = hub.api("POST", "shares/a/", {"user": "b"}, token=a_token)
    assert share["user"]["name"] == "b"
    assert "access:servers!server=a/" in share["scopes"]
    b_token = hub.new_token("b", note="after the share")
    assert hub.request("GET", f"{SERVER}/health", b_token).status_code == 200
    return Shared(hub, a_token, b_token, a_thread)


def test_the_owner_lists_the_thread_as_theirs(shared: Shared) -> None:
    listed = threads(shared.hub, shared.a_token)
    mine = [t for t in listed if t["threadId"] == shared.a_thread]
    assert len(mine) == 1, listed
    assert mine[0]["owner"] == "a"
    assert mine[0]["createdAt"] and mine[0]["updatedAt"]
    assert {t["owner"] for t in listed} == {"a"}
    history = shared.hub.request("GET", f"{SERVER}/threads/{shared.a_thread}", shared.a_token)
    assert history.status_code == 200, history.text
    contents = [m.get("content") for m in history.json()["messages"]]
    assert contents == ["a's secret plans", reply_of("a")]


def test_a_visitor_does_not_see_the_owners_threads(shared: Shared) -> None:
    hub, b = shared.hub, shared.b_token
    listed = threads(hub, b)
    assert shared.a_thread not in [t["threadId"] for t in listed]
    assert {t["owner"] for t in listed} <= {"b"}, listed

    response = hub.request("GET", f"{SERVER}/threads/{shared.a_thread}", b)
    assert response.status_code == 200, response.text
    assert response.json()["messages"] == []  # for b, an id b never used
    assert "secret" not in response.text


def test_a_visitor_cannot_run_or_resume_the_owners_thread(shared: Shared) -> None:
    hub, b = shared.hub, shared.b_token
    # b's run on a's thread id is a run on a thread of b's own.
    finished_run(hub, b, shared.a_thread, "b writes into a's thread")
    history = hub.request("GET", f"{SERVER}/threads/{shared.a_thread}", b).json()
    assert [m.get("content") for m in history["messages"]] == [
        "b writes into a's thread",
        reply_of("a"),
    ]

    resume = [{"interruptId": "x", "status": "resolved", "payload": {"approved": True}}]
    response = run(hub, b, shared.a_thread, "b answers for a", resume=resume)
    assert refusal(response) == (409, "no_pending_interrupt"), response.text
    # The same resume from the owner is refused for what it is: nothing waits on an answer.
    response = run(hub, shared.a_token, shared.a_thread, "a answers", resume=resume)
    assert refusal(response) == (409, "no_pending_interrupt"), response.text

    # a's thread is as a left it.
    history = hub.request("GET", f"{SERVER}/threads/{shared.a_thread}", shared.a_token).json()
    assert [m.get("content") for m in history["messages"]] == ["a's secret plans", reply_of("a")]


def test_a_visitor_keeps_threads_of_their_own_that_the_owner_does_not_see(
    shared: Shared,
) -> None:
    hub = shared.hub
    earlier, b_thread = f"b-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    finished_run(hub, shared.b_token, earlier, "b's first question")
    finished_run(hub, shared.b_token, b_thread, "b's own question")

    listed = threads(hub, shared.b_token)
    ours = [t["threadId"] for t in listed if t["threadId"] in (earlier, b_thread)]
    assert ours == [b_thread, earlier]  # newest first
    assert {t["owner"] for t in listed} == {"b"}, listed
    history = hub.request("GET", f"{SERVER}/threads/{b_thread}", shared.b_token)
    assert history.status_code == 200, history.text
    assert [m.get("content") for m in history.json()["messages"]] == [
        "b's own question",
        reply_of("a"),
    ]

    # The owner of the server sees only their own threads.
    mine = threads(hub, shared.a_token)
    assert b_thread not in [t["threadId"] for t in mine]
    assert {t["owner"] for t in mine} == {"a"}
    response = hub.request("GET", f"{SERVER}/threads/{b_thread}", shared.a_token)
    assert response.status_code == 200, response.text
    assert response.json()["messages"] == []  # for a, an id a never used


def test_an_admin_of_threads_reads_the_owners_thread_but_cannot_run_on_it(shared: Shared) -> None:
    """``--GthJupyterApp.admin_users=ops``, and ``ops`` a Hub admin (so it may reach a's
    server at all)."""
    hub, ops = shared.hub, shared.hub.users[ADMIN].token
    # An admin names the owner of the thread to read (ids are scoped per user).
    history = hub.request("GET", f"{SERVER}/threads/{shared.a_thread}?owner=a", ops)
    assert history.status_code == 200, history.text
    contents = [m.get("content") for m in history.json()["messages"]]
    assert contents == ["a's secret plans", reply_of("a")]
    everyone = hub.request("GET", f"{SERVER}/threads?all=true", ops)
    assert everyone.status_code == 200, everyone.text
    # Each thread with its owner (b has a thread of that id too, of b's own).
    listed = {(t["threadId"], t["owner"]) for t in everyone.json()["threads"]}
    assert (shared.a_thread, "a") in listed
    assert threads(hub, ops) == []  # ops's own: none
    # A run of ops's on a's thread id is on a thread of ops's own; a's is untouched.
    finished_run(hub, ops, shared.a_thread, "ops writes into a's thread")
    history = hub.request("GET", f"{SERVER}/threads/{shared.a_thread}?owner=a", ops)
    assert [m.get("content") for m in history.json()["messages"]] == contents
