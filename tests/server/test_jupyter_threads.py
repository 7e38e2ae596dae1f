"""GET {base_url}gth/threads/{id}: the conversation as AG-UI messages, for a reloaded page."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.copy import PHOTO_NOTE, render_static_copy
from tests.sse import sse_events as parse_sse

#: Both tests on the in-memory store and on the shared PostgreSQL one.
STORES = pytest.mark.parametrize("gth_checkpointer", ["memory", "postgres"], indirect=True)


@pytest.fixture
def gth_script() -> list[Any]:
    return [
        {
            "content": "Counting.",
            "toolCalls": [{"name": "gth_status_update", "args": {"message": "1"}}],
        },
        "Done.",
    ]


@STORES
async def test_history_matches_the_streamed_ids(jp_fetch) -> None:
    body = json.dumps(
        {"threadId": "h", "runId": "r", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
    )
    stream = await jp_fetch("gth", "agents", "default", "run", method="POST", body=body)
    events = parse_sse(stream.body)
    history = json.loads((await jp_fetch("gth", "threads", "h")).body)
    messages = history["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    starts = [e["messageId"] for e in events if e["type"] == "TEXT_MESSAGE_START"]
    assert [messages[1]["id"], messages[3]["id"]] == starts
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    assert messages[2]["id"] == result["messageId"] and messages[2]["content"] == "1"
    assert messages[1]["toolCalls"][0]["function"]["name"] == "gth_status_update"
    assert history["busy"] is False and history["pendingToolCallIds"] == []


@STORES
async def test_an_unknown_thread_is_empty(jp_fetch) -> None:
    history = json.loads((await jp_fetch("gth", "threads", "nobody")).body)
    assert history["messages"] == []


CAMERA = {
    "name": "capture_image",
    "description": "webcam",
    "parameters": {"type": "object", "properties": {}},
}
PHOTO = base64.b64encode(b"\xff\xd8\xff\xe0 a small JPEG").decode()


@pytest.fixture
def save_photos() -> bool:
    return False


@pytest.fixture
def jp_server_config(
    jp_server_config: dict[str, Any], jp_root_dir: Path, save_photos: bool
) -> dict[str, Any]:
    """The server's configuration, with ``jupyter.savePhotos`` as the test asks."""
    if save_photos:
        path = jp_root_dir / ".gsloth.config.json"
        path.write_text(
            json.dumps({**json.loads(path.read_text()), "jupyter": {"savePhotos": True}})
        )
    return jp_server_config


async def _photo_turn(jp_fetch: Any, thread: str, turn: str) -> None:
    """A ``%gth`` turn that asks for a photo (a browser tool) and answers once it has it."""
    user = [{"id": "u1", "role": "user", "content": "take a photo"}]
    props = {"gth": {"turnId": turn}}
    first = {"threadId": thread, "runId": "r1", "protocolVersion": "1.0", "messages": user}
    first["tools"] = [CAMERA]
    stream = await jp_fetch(
        "gth",
        "agents",
        "default",
        "run",
        method="POST",
        body=json.dumps({**first, "forwardedProps": props}),
    )
    (pending,) = parse_sse(stream.body)[-1]["outcome"]["pendingToolCallIds"]
    answer = {
        "interruptId": pending,
        "status": "resolved",
        "payload": {"mimeType": "image/jpeg", "data": PHOTO},
    }
    again = {**first, "runId": "r2", "resume": [answer], "forwardedProps": props}
    await jp_fetch("gth", "agents", "default", "run", method="POST", body=json.dumps(again))


@STORES
@pytest.mark.parametrize("save_photos", [False, True])
@pytest.mark.parametrize(
    "gth_script",
    [[{"content": "Say cheese.", "toolCalls": [{"name": "capture_image"}]}, "A **lovely** photo."]],
)
async def test_copy_is_the_turns_static_copy_rendered_from_the_same_read(
    jp_fetch: Any, save_photos: bool
) -> None:
    """``?copy=1``: the static copy a ``%gth`` cell saves, rendered by the server from the view
    it answers (the renderer the kernel uses for turns it ran), with the server's
    ``jupyter.savePhotos``: the page writes it into the notebook with no other read."""
    await _photo_turn(jp_fetch, "c", "turn-1")
    read = json.loads(
        (await jp_fetch("gth", "threads", "c", params={"turn": "turn-1", "copy": "1"})).body
    )
    copy = read.pop("copy")
    assert copy == render_static_copy(read, save_photos=save_photos)
    assert "<strong>lovely</strong>" in copy["text/html"] and "lovely" in copy["text/plain"]
    assert (f"data:image/jpeg;base64,{PHOTO}" in copy["text/html"]) is save_photos
    assert (PHOTO_NOTE in copy["text/html"]) is not save_photos
    # Without the parameter no copy is rendered; for a turn not on the thread (its run was
    # refused) there is none to give; the whole thread (%gth alone) has its copy too.
    plain = json.loads((await jp_fetch("gth", "threads", "c", params={"turn": "turn-1"})).body)
    assert "copy" not in plain and plain == read
    missing = await jp_fetch("gth", "threads", "c", params={"turn": "turn-2", "copy": "1"})
    assert json.loads(missing.body)["copy"] is None
    whole = json.loads((await jp_fetch("gth", "threads", "c", params={"copy": "1"})).body)
    assert whole["copy"] == copy
