"""Security issue, item 3 end to end: "Always allow" for a shell command covers that exact command.

The reported attack, over the standalone server's HTTP API with a scripted model and a real
``/bin/sh``: the person grants ``echo cleaning: rm -f victim.txt`` for the thread; the model then
sends ``"echo cleaning:\\nrm -f victim.txt"``, which a grant keyed on the normalised command
(newline folded into a space) ran unasked, deleting the file. Now it is asked about again, offered
for this once only (``grantable: false`` and the reason), and a client that sends a grant for it
anyway gets it approved once and nothing kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio

from tests.sse import sse_events
from tests.standalone import standalone

TOKEN = "t0ken-t0ken-t0ken"
AUTH = {"Authorization": f"token {TOKEN}"}
GRANTED = "echo cleaning: rm -f victim.txt"
SMUGGLED = "echo cleaning:\nrm -f victim.txt"


def call(command: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "run_shell_command", "args": {"command": command}}]}


@pytest_asyncio.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Path]]:
    responses = [call(GRANTED), "Cleaned."]
    responses += [call(SMUGGLED), "Not cleaned.", call(SMUGGLED), "Cleaned.", call(SMUGGLED)]
    config = {
        "llm": {"type": "fake", "responses": responses},
        "builtInTools": {"run_shell_command": True},
        "approvals": "manual",
    }
    (tmp_path / "victim.txt").write_text("keep me")
    async with standalone(tmp_path, config, token=TOKEN) as served:
        yield served.http, tmp_path


class Thread:
    """Runs on thread ``t``: a user turn, or a resume answering the one pending approval."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.runs = 0

    async def _run(self, **extra: Any) -> dict[str, Any]:
        self.runs += 1
        body = {"threadId": "t", "runId": f"r{self.runs}", "protocolVersion": "1.0", **extra}
        response = await self.http.post("/gth/agents/default/run", headers=AUTH, json=body)
        assert response.status_code == 200, response.text
        finished = sse_events(response.text)[-1]
        assert finished["type"] == "RUN_FINISHED", finished
        return dict(finished["outcome"])

    async def say(self, text: str) -> dict[str, Any]:
        message = {"id": f"u{self.runs}", "role": "user", "content": text}
        return await self._run(messages=[message])

    async def answer(self, interrupt: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}]
        return await self._run(messages=[], resume=resume)

    async def grants(self) -> list[dict[str, Any]]:
        listed = await self.http.get("/gth/threads/t/grants", headers=AUTH)
        assert listed.status_code == 200
        return list(listed.json()["grants"])


def value_of(interrupt: dict[str, Any]) -> dict[str, Any]:
    return dict(interrupt["metadata"]["gth"]["value"])


async def test_a_grant_does_not_cover_the_command_with_a_newline_smuggled_in(
    served: tuple[httpx.AsyncClient, Path],
) -> None:
    http, root = served
    thread = Thread(http)

    (asked,) = (await thread.say("clean up"))["interrupts"]
    assert value_of(asked)["command"] == GRANTED and value_of(asked)["grantable"] is True
    done = await thread.answer(asked, {"approved": True, "grant": "thread"})
    assert done["type"] == "success"
    assert [g["label"] for g in await thread.grants()] == [GRANTED]
    assert (root / "victim.txt").exists()  # echo printed the words; nothing was removed

    # The model's multi-line twin: asked again, not run, and offered for this once only.
    outcome = await thread.say("clean up again")
    assert outcome["type"] == "interrupt"
    (asked,) = outcome["interrupts"]
    value = value_of(asked)
    assert value["command"] == SMUGGLED
    assert value["grantable"] is False and "line break" in value["grantReason"]
    assert "grant" not in asked["responseSchema"]["properties"]
    assert (root / "victim.txt").read_text() == "keep me"
    assert (await thread.answer(asked, {"approved": False}))["type"] == "success"
    assert (root / "victim.txt").read_text() == "keep me"

    # A client that sends a grant for it anyway: the person approved it, so it runs this once;
    # no grant is kept, so the next time it is asked about again.
    (asked,) = (await thread.say("then do it"))["interrupts"]
    assert (await thread.answer(asked, {"approved": True, "grant": "thread"}))["type"] == (
        "success"
    )
    assert not (root / "victim.txt").exists()
    assert [g["label"] for g in await thread.grants()] == [GRANTED]
    (root / "victim.txt").write_text("keep me")
    outcome = await thread.say("once more")
    assert outcome["type"] == "interrupt"
    assert value_of(outcome["interrupts"][0])["command"] == SMUGGLED
    assert (root / "victim.txt").read_text() == "keep me"
