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

from ..contract.errors import InterruptMismatchError, InterruptPendingError
from ..contract.kernel import KernelAccess
from ..contract.messages import public_message_id
from ..contract.names import CELL_KEY, RUN_META_KEY, TURN_KEY
from ..contract.resume import (
    ToolResult,
    forwarded_command,
    resume_from_command,
    resume_from_entries,
    resume_from_tool_results,
)
from ..contract.run import EMPTY_SCHEMA, ClientToolSpec, RunPlan, ThreadState
from .messages import cancelled_result, convert_history, to_langchain

__all__ = ["Decision", "decide_plan"]

log = logging.getLogger(__name__)

_NEW_TURN_ROLES = ("user", "system", "developer")


@dataclass
class Decision:
    """A plan for the runtime plus what the AG-UI mapping must know about the request."""

    plan: RunPlan
    # Tool call ids whose results the client sent itself: never echoed back (Gaunt Sloth RC-33).
    client_answered: set[str] = field(default_factory=set)


def decide_plan(
    request: agui.RunAgentInput,
    state: ThreadState,
    *,
    turn: str | None = None,
    thread_key: str | None = None,
    kernel: KernelAccess | None = None,
    owner: str = "",
    cell: str | None = None,
    known: frozenset[str] = frozenset(),
) -> Decision:
    """What ``request`` asks of a thread in ``state``; raises an ``AgentError`` to refuse it.

    The user messages it adds are tagged with ``turn`` (the widget that sent them), so a page
    can later show one cell's turn alone. The plan runs on ``thread_key`` (the thread's key in
    the store; default: the request's thread id), for ``owner``, with ``kernel`` for its kernel
    tools, and reuses ``state`` as the thread it read: it is whole when decided. ``cell`` is the
    notebook cell the turn runs for (tagged too); ``known`` the ids of messages the thread holds
    elsewhere (a branch's other line), which are not new input either."""
    decision = _decide(request, state, thread_key or request.thread_id, kernel, owner, known)
    if turn is not None or cell is not None:
        for message in (*decision.plan.messages, *decision.plan.queued):
            if isinstance(message, HumanMessage):
                if turn is not None:
                    message.additional_kwargs[TURN_KEY] = turn
                if cell is not None:
                    message.additional_kwargs[CELL_KEY] = cell
    return decision


def tag_run(plan: RunPlan, run_id: str) -> None:
    """Tags the user messages ``plan`` adds with its run, which names their turn in the thread
    view (and its usage) when the client sent no turn id."""
    if run_id:
        for message in (*plan.messages, *plan.queued):
            if isinstance(message, HumanMessage):
                message.additional_kwargs.setdefault(RUN_META_KEY, run_id)


def _decide(
    request: agui.RunAgentInput,
    state: ThreadState,
    thread_key: str,
    kernel: KernelAccess | None,
    owner: str,
    known: frozenset[str],
) -> Decision:
    plan = RunPlan(
        thread_id=thread_key,
        kernel=kernel,
        owner=owner,
        before=state,
        client_tools=[
            ClientToolSpec(t.name, t.description or "", t.parameters or dict(EMPTY_SCHEMA))
            for t in request.tools or []
        ],
        context=[(c.description, c.value) for c in request.context or []],
        # The client's shared state; the runtime lets a non-empty object replace the thread's.
        state=request.state if isinstance(request.state, dict) else None,
    )
    answered_here = {m.tool_call_id for m in request.messages if m.role == "tool"}
    decision = Decision(plan, answered_here)
    fresh = _unknown_messages(request.messages, state, known)

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
        entries = [(e.interrupt_id, e.status, e.payload) for e in request.resume]
        plan.resume, unknown = resume_from_entries(entries, request.thread_id, state.pending)
        if unknown:
            log.warning("Ignoring resume entries for unknown interrupts: %s", ", ".join(unknown))
        plan.queued = _user_turns(fresh)
        return decision
    command = forwarded_command(request.forwarded_props)
    if command is not None:
        plan.resume = resume_from_command(command, request.thread_id, state.pending)
        plan.queued = _queued(command.get("queuedMessages"))
        return decision
    results = [
        ToolResult(
            m.tool_call_id,
            m.content if isinstance(m.content, str) else _parts_json(m.content),
            bool(m.error),
            m.id,
        )
        for m in fresh
        if m.role == "tool"
    ]
    plan.resume = resume_from_tool_results(results, state.pending)
    if plan.resume is not None:
        plan.queued = _user_turns(fresh)
        return decision

    if state.pending:
        if any(not p.client_tool for p in state.pending):
            raise InterruptPendingError(state.pending)
        calls = state.answered_call_ids() | {c["id"] for c in state.dangling_calls()}
        stray = [r.tool_call_id for r in results if r.tool_call_id not in calls]
        if stray:
            # A result for a call nobody made must not cancel the call the thread waits on.
            raise InterruptMismatchError(
                f"The tool message for call {stray[0]!r} answers nothing thread "
                f"'{request.thread_id}' waits on.",
                state.pending,
            )
        # The user moved on without answering the client tools: close those calls.
        plan.abandon = list(state.pending)
    plan.messages = _new_turn(fresh, state)
    plan.continue_run = not plan.messages and state.can_continue
    return decision


def _unknown_messages(
    messages: Sequence[agui.Message], state: ThreadState, elsewhere: frozenset[str]
) -> list[Any]:
    known = set(state.message_ids) | elsewhere
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
