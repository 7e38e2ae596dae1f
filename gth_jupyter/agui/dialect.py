"""Which AG-UI dialect a client speaks, and the 0.x transformation of a run's events.

Clients built on ``@ag-ui/client`` 1.0 send ``RunAgentInput.protocolVersion: "1.0"`` on every
run; clients built on 0.0.x (CopilotKit's runtime 1.75 bundles 0.0.59) send none. So an absent
version means 0.x, unless the command's ``agui.protocol`` setting forces one dialect.

The mapping (``mapping.py``) speaks 1.0. For a 0.x client only the few events whose shape 0.x
verifiers refuse are rewritten; text, reasoning and tool call events pass untouched (and the
token fast path in ``run.py`` never reaches this module):

- ``RUN_STARTED`` loses ``protocolVersion``;
- ``RUN_FINISHED`` loses ``outcome`` and ``usage``, ``RUN_ERROR`` its ``usage`` (0.0.59
  refuses ``pendingToolCallIds`` in a success outcome, older clients know no outcome at all,
  and no 0.x client knows usage). A suspended client tool is signalled as
  Gaunt Sloth does: its ``TOOL_CALL_START/ARGS/END`` with no result, then ``RUN_FINISHED``; the
  client answers with a trailing ``tool`` message on its next run;
- an interrupt that is not a client tool (an approval) ends the run the way the official
  LangGraph adapter does by default: one ``CUSTOM on_interrupt`` per interrupt (its value the
  interrupt's value as a JSON string, as CopilotKit's LangGraph interrupt hooks read it), then a
  plain ``RUN_FINISHED``; the client answers with ``forwardedProps.command.resume`` (naming
  the interrupt in ``interruptEvent.interruptId`` when several wait).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal, get_args

import ag_ui.core as agui
from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    EventType,
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
)

from ..contract.pending import CLIENT_TOOL_REASON

__all__ = [
    "DIALECTS",
    "INTERRUPT_EVENT",
    "PROTOCOL_SETTINGS",
    "Dialect",
    "ProtocolSetting",
    "dialect_of",
    "legacy_events",
]

#: What ``commands.<cmd>.agui.protocol`` may say.
ProtocolSetting = Literal["auto", "1.0", "0.x"]
PROTOCOL_SETTINGS: tuple[str, ...] = get_args(ProtocolSetting)
#: The dialects a run may stream in.
Dialect = Literal["1.0", "0.x"]
DIALECTS: tuple[Dialect, ...] = ("1.0", "0.x")
#: The CUSTOM event name a 0.x client reads an interrupt from (the LangGraph adapter's).
INTERRUPT_EVENT = "on_interrupt"


def dialect_of(request: agui.RunAgentInput, setting: str = "auto") -> Dialect:
    """The dialect to answer ``request`` in: the setting's, unless it is ``auto``; then 0.x
    for a request without ``protocolVersion`` (or with a ``0.`` one), else 1.0."""
    if setting == "1.0":
        return "1.0"
    if setting == "0.x":
        return "0.x"
    version = request.protocol_version
    if version is None or version.strip().startswith("0."):
        return "0.x"
    return "1.0"


def legacy_events(event: BaseEvent) -> Iterator[BaseEvent]:
    """``event`` as a 0.x client accepts it (see the module docstring)."""
    kind = event.type
    if kind is EventType.RUN_STARTED and isinstance(event, RunStartedEvent):
        yield RunStartedEvent(
            thread_id=event.thread_id, run_id=event.run_id, parent_run_id=event.parent_run_id
        )
    elif kind is EventType.RUN_FINISHED and isinstance(event, RunFinishedEvent):
        outcome = event.outcome
        if isinstance(outcome, agui.RunFinishedInterruptOutcome):
            for interrupt in outcome.interrupts:
                if interrupt.reason == CLIENT_TOOL_REASON:
                    continue  # a client tool: its TOOL_CALL_START/ARGS/END say it all
                yield CustomEvent(name=INTERRUPT_EVENT, value=_interrupt_value(interrupt))
        yield RunFinishedEvent(thread_id=event.thread_id, run_id=event.run_id, result=event.result)
    elif kind is EventType.RUN_ERROR and isinstance(event, RunErrorEvent):
        # 0.x knows no usage (nor event metadata): the error alone.
        yield RunErrorEvent(message=event.message, code=event.code)
    else:
        yield event


def _interrupt_value(interrupt: agui.Interrupt) -> str:
    """The interrupt's own value as a JSON string (what the LangGraph adapter sends), with its
    id and tool call id added when the value is an object, so an answer can name it."""
    meta = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
    gth = meta.get("gth") if isinstance(meta.get("gth"), dict) else {}
    value: Any = gth.get("value") if gth else None
    if value is None:
        value = interrupt.model_dump(by_alias=True, exclude_none=True, mode="json")
    elif isinstance(value, dict):
        value = {**value, "interruptId": interrupt.id}
        if interrupt.tool_call_id:
            value.setdefault("toolCallId", interrupt.tool_call_id)
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return json.dumps(repr(value))
