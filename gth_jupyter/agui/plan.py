"""Deciding what a request asks of a thread: a fresh turn, or answers to what it waits on.

Clients answer a suspended run in three shapes, all accepted:

(a) AG-UI 1.0 ``resume[]`` entries, keyed by interrupt id (or, for a client tool, by its tool
    call id, since a client only ever saw that);
(b) Gaunt Sloth's ``forwardedProps.command.resume`` with ``interruptEvent`` and optional
    ``queuedMessages``;
(c) trailing ``tool`` messages answering pending client tool calls, which is what
    ``@ag-ui/client`` and CopilotKit send.

Clients resend their whole history on every run, so only messages the thread does not already
hold are new input.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

import ag_ui.core as agui
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from ..agent.client_tools import EMPTY_SCHEMA, ClientToolAnswer, ClientToolSpec
from ..agent.runtime import PendingInterrupt, RunPlan, ThreadState
from ..agent.stream import public_message_id
from . import errors
from .messages import cancelled_result, convert_history, to_langchain

log = logging.getLogger(__name__)

_NEW_TURN_ROLES = ("user", "system", "developer")


@dataclass
class Decision:
    """A plan for the runtime plus what the AG-UI mapping must know about the request."""

    plan: RunPlan
    # Tool call ids whose results the client sent itself: never echoed back (Gaunt Sloth RC-33).
    client_answered: set[str] = field(default_factory=set)


def describe_pending(pending: Sequence[PendingInterrupt]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in pending:
        item: dict[str, Any] = {"interruptId": p.id, "clientTool": p.client_tool}
        if p.tool_call_id:
            item["toolCallId"] = p.tool_call_id
        if p.tool_name:
            item["toolName"] = p.tool_name
        out.append(item)
    return out


def decide(request: agui.RunAgentInput, state: ThreadState) -> Decision:
    plan = RunPlan(
        thread_id=request.thread_id,
        client_tools=[
            ClientToolSpec(t.name, t.description or "", t.parameters or dict(EMPTY_SCHEMA))
            for t in request.tools or []
        ],
        context=[(c.description, c.value) for c in request.context or []],
    )
    answered_here = {m.tool_call_id for m in request.messages if m.role == "tool"}
    decision = Decision(plan, answered_here)
    fresh = _unknown_messages(request.messages, state)

    # A resumed call must still find its client tool, even if this request forgot to declare it.
    declared = {spec.name for spec in plan.client_tools}
    plan.client_tools += [
        ClientToolSpec(name, "")
        for name in dict.fromkeys(
            p.tool_name for p in state.pending if p.client_tool and p.tool_name
        )
        if name not in declared
    ]
    if request.resume:
        plan.resume = _from_resume_entries(request, state)
        plan.queued = _user_turns(fresh)
        return decision
    command = _forwarded_command(request.forwarded_props)
    if command is not None:
        plan.resume, plan.queued = _from_command(command, request.thread_id, state)
        return decision
    by_call = {p.tool_call_id: p for p in state.pending if p.client_tool and p.tool_call_id}
    answers = [m for m in fresh if m.role == "tool" and m.tool_call_id in by_call]
    if answers:
        plan.resume = {
            by_call[m.tool_call_id].id: ClientToolAnswer(
                payload=m.content if isinstance(m.content, str) else _parts_json(m.content),
                is_error=bool(m.error),
                message_id=m.id,
            ).to_resume_value()
            for m in answers
        }
        plan.queued = _user_turns(fresh)
        return decision

    if state.pending:
        blocking = [p for p in state.pending if not p.client_tool]
        if blocking:
            raise errors.interrupt_pending(describe_pending(state.pending))
        # The user moved on without answering the client tools: close those calls.
        plan.abandon = list(state.pending)
    plan.messages = _new_turn(fresh, state)
    plan.continue_run = not plan.messages and state.can_continue
    return decision


def _unknown_messages(messages: Sequence[agui.Message], state: ThreadState) -> list[Any]:
    known = state.message_ids
    known |= {pid for pid in (public_message_id(i) for i in known) if pid}
    return [m for m in messages if m.id not in known]


def _new_turn(fresh: Sequence[Any], state: ThreadState) -> list[BaseMessage]:
    if not state.messages:
        return convert_history(fresh)
    out: list[BaseMessage] = []
    dangling = {c["id"]: c["name"] for c in state.dangling_calls()}
    for message in fresh:
        if message.role == "tool" and message.tool_call_id in dangling:
            converted = to_langchain(message)
            if isinstance(converted, ToolMessage):
                converted.name = dangling.pop(message.tool_call_id)
                out.append(converted)
    # Calls cut off by a cancelled run get an error result before the new turn.
    out += [cancelled_result(call_id, name) for call_id, name in dangling.items()]
    turns = [m for m in fresh if m.role in _NEW_TURN_ROLES]
    if not turns:
        return [] if not out else out
    out += [c for c in (to_langchain(m) for m in turns) if c is not None]
    return out


def _user_turns(fresh: Sequence[Any]) -> list[BaseMessage]:
    turns = (to_langchain(m) for m in fresh if m.role in _NEW_TURN_ROLES)
    return [m for m in turns if m is not None]


def _parts_json(content: Any) -> Any:
    return [p.model_dump(by_alias=True, exclude_none=True) for p in content or []]


def _answer(pending: PendingInterrupt, status: str, payload: Any) -> Any:
    if pending.client_tool:
        return ClientToolAnswer(
            status="cancelled" if status == "cancelled" else "resolved", payload=payload
        ).to_resume_value()
    if status == "cancelled":
        return {"status": "cancelled"}
    return payload


def _from_resume_entries(request: agui.RunAgentInput, state: ThreadState) -> dict[str, Any]:
    if not state.pending:
        raise errors.no_pending_interrupt(request.thread_id)
    by_id = {p.id: p for p in state.pending}
    by_call = {p.tool_call_id: p for p in state.pending if p.client_tool and p.tool_call_id}
    answers: dict[str, Any] = {}
    unknown: list[str] = []
    for entry in request.resume or []:
        pending = by_id.get(entry.interrupt_id) or by_call.get(entry.interrupt_id)
        if pending is None:
            unknown.append(entry.interrupt_id)
            continue
        answers[pending.id] = _answer(pending, entry.status, entry.payload)
    if not answers:
        raise errors.interrupt_mismatch(
            f"No resume entry matches an interrupt pending on thread '{request.thread_id}' "
            f"(unknown: {', '.join(unknown)}).",
            describe_pending(state.pending),
        )
    if unknown:
        log.warning("Ignoring resume entries for unknown interrupts: %s", ", ".join(unknown))
    return answers


def _forwarded_command(props: Any) -> dict[str, Any] | None:
    if isinstance(props, dict):
        command = props.get("command")
        if isinstance(command, dict) and "resume" in command:
            return command
    return None


def _from_command(
    command: dict[str, Any], thread_id: str, state: ThreadState
) -> tuple[dict[str, Any], list[BaseMessage]]:
    if not state.pending:
        raise errors.no_pending_interrupt(thread_id)
    event = command.get("interruptEvent")
    event = event if isinstance(event, dict) else {}
    wanted = [event.get(k) for k in ("toolCallId", "interruptId", "id") if event.get(k)]
    if wanted:
        target = next(
            (p for p in state.pending for w in wanted if w in (p.id, p.tool_call_id)), None
        )
        if target is None:
            raise errors.interrupt_mismatch(
                f"interruptEvent names {wanted[0]!r}, which is not pending on thread "
                f"'{thread_id}'.",
                describe_pending(state.pending),
            )
    elif len(state.pending) == 1:
        target = state.pending[0]
    else:
        raise errors.interrupt_mismatch(
            f"{len(state.pending)} interrupts are pending on thread '{thread_id}'; name one "
            "with forwardedProps.command.interruptEvent.toolCallId.",
            describe_pending(state.pending),
        )
    value = command["resume"]
    answer = ClientToolAnswer(payload=value).to_resume_value() if target.client_tool else value
    return {target.id: answer}, _queued(command.get("queuedMessages"))


def _queued(items: Any) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            out.append(HumanMessage(content=item))
        elif isinstance(item, dict):
            if "id" not in item:
                item = {**item, "id": f"queued-{uuid4()}"}
            try:
                message = agui.UserMessage.model_validate({"role": "user", **item})
            except ValueError:
                continue
            converted = to_langchain(message)
            if converted is not None:
                out.append(converted)
    return out
