"""A thread as a client sees it: its checkpointed messages as AG-UI messages, and what it waits on.

Ids match the ones the stream used, so a client that merges history with live events sees one
message, not two. Messages the middleware injected for the model (a captured frame) are left
out: the transcript shows the tool call that produced them instead. The images a kernel tool
returned (``run_python``'s plots) and the photo ``capture_image`` took were moved out of the
tool's result into such a message, so they are put back into the result here, for the tool's
card (a photo as the ``{"mimeType", "data"}`` the browser sent): the checkpoint keeps them once.

Each A2UI surface shown is also an AG-UI activity message (role ``activity``, the id its
``ACTIVITY_SNAPSHOT`` had), right after the tool message that first showed it and with every
operation shown for it since, so a client rebuilding the thread renders it once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ..agent.runtime import Runtime
from ..contract.errors import ThreadRunNotFoundError
from ..contract.messages import public_message_id, tool_content_text
from ..contract.names import IMAGES_FOR, INJECTED_MARK, PHOTO_PLACEHOLDER
from ..contract.run import ThreadState
from ..contract.surfaces import thread_activities
from ..contract.undo import undo_of
from ..contract.usage import UsageAccount, usage_of_messages
from ..store.base import RunRecord
from .mapping import to_interrupt

__all__ = ["branches", "spent", "thread_view", "to_agui_messages", "turn_calls"]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "".join(str(p) for p in parts)


def _user_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        # media blocks stay on the server: a transcript does not need the bytes
    return parts if parts else ""


def _block_image(block: Any) -> tuple[str, str] | None:
    """``(mime, base64)`` of an image content block, whichever provider shape it has."""
    if not isinstance(block, dict):
        return None
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        return str(source.get("media_type")), str(source.get("data"))
    if block.get("source_type") == "base64":
        return str(block.get("mime_type")), str(block.get("data"))
    url = block.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return head, data
    return None


def _moved_images(messages: list[BaseMessage]) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for message in messages:
        call_id = message.additional_kwargs.get(IMAGES_FOR)
        if isinstance(call_id, str) and isinstance(message.content, list):
            images = [i for b in message.content if (i := _block_image(b)) is not None]
            found[call_id] = images
    return found


def _with_images(content: str, images: list[tuple[str, str]]) -> str:
    """A tool result whose ``omitted`` images get their bytes back, in order; a photo's
    placeholder becomes the photo again."""
    if content.startswith(PHOTO_PLACEHOLDER) and images:
        mime, data = images[0]
        return json.dumps({"mimeType": mime, "data": data})
    try:
        value = json.loads(content)
    except ValueError:
        return content
    listed = value.get("images") if isinstance(value, dict) else None
    if not isinstance(listed, list):
        return content
    left = iter(images)
    restored = []
    for image in listed:
        if isinstance(image, dict) and image.get("omitted") and image.get("data") is None:
            found = next(left, None)
            if found is not None:
                image = {"mimeType": found[0], "data": found[1]}
        restored.append(image)
    return json.dumps({**value, "images": restored}, ensure_ascii=False)


def to_agui_messages(messages: Iterable[BaseMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    messages = list(messages)
    moved = _moved_images(messages)
    activities = thread_activities(messages)
    for message in messages:
        if message.additional_kwargs.get(INJECTED_MARK) and isinstance(message, HumanMessage):
            continue
        mid = public_message_id(message.id) or ""
        if isinstance(message, HumanMessage):
            out.append({"id": mid, "role": "user", "content": _user_content(message.content)})
        elif isinstance(message, AIMessage):
            item: dict[str, Any] = {"id": mid, "role": "assistant"}
            text = _text(message.content)
            if text:
                item["content"] = text
            if message.tool_calls:
                item["toolCalls"] = [
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["name"], "arguments": json.dumps(call["args"])},
                    }
                    for call in message.tool_calls
                ]
            out.append(item)
        elif isinstance(message, ToolMessage):
            content = tool_content_text(message.content)
            if message.tool_call_id in moved:
                content = _with_images(content, moved[message.tool_call_id])
            tool: dict[str, Any] = {
                "id": mid,
                "role": "tool",
                "toolCallId": message.tool_call_id,
                "content": content,
            }
            if message.status == "error":
                tool["error"] = tool["content"]
            if (undo := undo_of(message.artifact)) is not None:
                tool["undo"] = undo  # what a notebook write replaced (the Changes card's Undo)
            out.append(tool)
            for activity in activities.get(message.id or "", ()):
                out.append(
                    {
                        "id": activity.message_id,
                        "role": "activity",
                        "activityType": activity.activity_type,
                        "content": activity.content,
                    }
                )
    return out


def branches(records: list[RunRecord], current: str) -> list[dict[str, Any]]:
    """The thread's branches, each named by its last run: a run no later run started from.
    ``current`` marks the one the thread's latest checkpoint is on (run ``current``);
    ``parentRunId`` is the run that last run started from (``None``: the thread's start)."""
    parents = {r.parent_run_id for r in records}
    return [
        {
            "runId": r.run_id,
            "parentRunId": r.parent_run_id or None,
            "turnId": r.turn_id or None,
            "createdAt": r.created_at,
            "current": r.run_id == current,
        }
        for r in records
        if r.run_id not in parents
    ]


def _usage(runtime: Runtime, account: UsageAccount) -> dict[str, Any]:
    """``usage`` (AG-UI ``TokenUsage`` objects, one per provider and model) and ``cost``."""
    return {"usage": account.entries(), "cost": runtime.cost(account)}


async def spent(
    runtime: Runtime, thread_id: str, records: list[RunRecord], latest: ThreadState
) -> UsageAccount:
    """What the thread spent: every model call on every branch, each once (the branches share
    the messages before they part)."""
    messages = list(latest.messages)
    for tip in branches(records, latest.run_id):
        if tip["current"]:
            continue
        checkpoint = await runtime.run_end(thread_id, tip["runId"])
        if checkpoint is not None and checkpoint != latest.checkpoint_id:
            messages += (await runtime.thread_state(thread_id, checkpoint)).messages
    return usage_of_messages(messages)


async def thread_view(
    runtime: Runtime,
    thread_id: str,
    turn: str | None = None,
    *,
    shown_id: str | None = None,
    run: str | None = None,
) -> dict[str, Any]:
    """A thread as a client rebuilds it: its AG-UI messages, what it waits on, whether a run is
    in flight, and its turns. ``GET gth/threads/{id}`` and the comm's ``history`` answer this.
    ``thread_id`` is the thread's key in the store; ``shown_id`` the id its client sends (by
    default the same; they differ for a user whose ids are scoped, see ``owners``).

    With ``turn``, only that turn's messages (and the interrupts it waits on) are given: a
    ``%gth`` cell shows its own turn. ``turns`` lists every turn in order, each ``done``
    unless it is the thread's last turn and a run is in flight or an interrupt waits, named by
    the turn id its client sent (``turnId``; ``null`` when none was) and the run that started it
    (``runId``), with its first message's id (``messageId``) and the ``usage`` and ``cost`` of
    its model calls. ``state`` is the thread's
    shared state, when it has one.

    Usage: the view's own ``usage`` and ``cost`` are what the thread spent, on every branch;
    each turn's are its own (on the branch shown).

    Branches: the messages are the thread's current branch (where its latest checkpoint is),
    and ``branches`` lists every branch. With ``run``, the thread as that run left it (an
    unknown one is :class:`ThreadRunNotFoundError`); a ``turn`` not on the current branch is
    read where its last run left it. ``currentBranch`` says whether what is shown is on the
    current branch (only then does it list what the thread waits on)."""
    state = latest = await runtime.thread_state(thread_id)
    records = await runtime.runs(thread_id)
    if run is not None:
        checkpoint = await runtime.run_end(thread_id, run)
        if checkpoint is None:
            raise ThreadRunNotFoundError(shown_id or thread_id, run)
        if checkpoint != latest.checkpoint_id:
            state = await runtime.thread_state(thread_id, checkpoint)
    elif turn is not None and turn not in {t.turn_id for t in state.turns()}:
        ran = [r.run_id for r in records if r.turn_id == turn]
        checkpoint = await runtime.run_end(thread_id, ran[-1]) if ran else None
        if checkpoint is not None:
            state = await runtime.thread_state(thread_id, checkpoint)
    current = state is latest
    running = await runtime.running(thread_id)
    busy = running is not None
    turns = state.turns()
    last = turns[-1] if turns else None
    messages = state.messages
    pending = state.pending if current else []
    if turn is not None:
        messages = [m for t in turns if t.turn_id == turn for m in t.messages]
        if last is None or last.turn_id != turn:
            pending = []
    view: dict[str, Any] = {
        "threadId": shown_id if shown_id is not None else thread_id,
        "messages": to_agui_messages(messages),
        "pendingToolCallIds": [p.tool_call_id for p in pending if p.client_tool],
        "interrupts": [
            to_interrupt(p).model_dump(mode="json", by_alias=True, exclude_none=True)
            for p in pending
        ],
        "busy": busy,
        "turns": [
            {
                "turnId": t.turn_id,
                "done": not current or t is not last or not (busy or state.pending),
                **({"cellId": t.cell_id} if t.cell_id else {}),
                **({"runId": t.run_id} if t.run_id else {}),
                "messageId": public_message_id(t.messages[0].id) or "",
                **_usage(runtime, usage_of_messages(t.messages)),
            }
            for t in turns
            if t.turn_id is not None or t.run_id is not None
        ],
        "currentBranch": current,
        "branches": branches(records, latest.run_id),
        **_usage(runtime, await spent(runtime, thread_id, records, latest)),
    }
    if running:
        # The run in flight, for a client to re-attach to (GET gth/runs/{id}/events).
        view["run"] = {"runId": running}
    if state.state:
        view["state"] = state.state  # the shared state, given only when the thread has one
    return view


#: How many of a call's largest items ``largest`` lists.
LARGEST = 5


async def turn_calls(runtime: Runtime, thread_id: str, turn: str | None) -> dict[str, Any] | None:
    """What each model call of a turn (``turnId``, or ``runId`` for a turn its client named
    none for; every call on the current branch for ``None``) was sent, oldest first:
    ``{"calls": [{"messageId", "model", "usage", "messages": [{role, kind, tokens, chars,
    content, cut?}], "tools", "largest": [{kind, tokens, share}], "cut"?}]}``; ``None`` when
    the thread has no such turn (on any branch). A call from before calls were kept is left
    out."""
    state = await runtime.thread_state(thread_id)
    turns = state.turns()
    if turn is not None:
        mine = [t for t in turns if turn in (t.turn_id, t.run_id)]
        if not mine:  # a turn a re-run cell above left behind: where its last run left it
            records = await runtime.runs(thread_id)
            ran = [r.run_id for r in records if turn in (r.turn_id, r.run_id)]
            checkpoint = await runtime.run_end(thread_id, ran[-1]) if ran else None
            if checkpoint is not None:
                other = (await runtime.thread_state(thread_id, checkpoint)).turns()
                mine = [t for t in other if turn in (t.turn_id, t.run_id)]
        if not mine:
            return None
        turns = mine
    ids = [m.id for t in turns for m in t.messages if isinstance(m, AIMessage) and m.id]
    kept = await runtime.threads.model_calls(thread_id, ids) if ids else {}
    calls: list[dict[str, Any]] = []
    for message_id in ids:
        text = kept.get(message_id)
        if text is None:
            continue
        try:
            call = json.loads(text)
        except ValueError:
            continue
        items = [i for i in call.get("messages") or [] if isinstance(i, dict)]
        whole = sum(int(i.get("tokens") or 0) for i in items) or 1
        ranked = sorted(items, key=lambda i: int(i.get("tokens") or 0), reverse=True)
        call["largest"] = [
            {
                "kind": i.get("kind"),
                "tokens": int(i.get("tokens") or 0),
                "share": round(int(i.get("tokens") or 0) / whole, 3),
            }
            for i in ranked[:LARGEST]
        ]
        calls.append({"messageId": public_message_id(message_id) or message_id, **call})
    return {"calls": calls}
