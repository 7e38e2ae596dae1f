"""The approvals gate: every tool call passes here before it runs (see ``approval_policy.py``).

For each call the gate decides: run it; refuse it (an error result naming the ``deny`` rule); ask
the rater; or ask the person. Asking the person is a LangGraph ``interrupt`` whose value becomes
an AG-UI interrupt (``reason: "confirmation"``); the run ends there, the notebook widget shows
Approve / Edit / Reject, and the answer comes back through ``resume[]`` as ``{"approved": bool,
"editedArgs"?: {...}}`` (LangChain's HITL decisions ``{"type": "approve" | "edit" | "reject"}``
are read too; ``{"status": "cancelled"}`` is a rejection). An edited call is checked against
``deny`` again and runs with a note telling the model what ran; a rejected one becomes an error
result saying the user rejected it, so the model can change course. Where nobody answers
approvals (the ``api`` command), a call that would ask is refused instead.

An approval may also grant such calls from then on (``"grant": "thread" | "session"``): the gate
keeps the grant in its :class:`~gth_jupyter.middleware.grants.GrantStore` (in memory, never in the
configuration), and a later call it covers runs without asking, unless a ``deny`` rule refuses it,
an ``escalate`` rule asks about it anyway, or a custom tool's arguments fail validation. A call
that cannot be granted (a shell command with a line break or another control character, see
:func:`~gth_jupyter.middleware.grants.grant_refusal`) is asked with ``grantable: false``, a
``grantReason`` sentence and a response schema without ``grant``; a ``grant`` sent for it anyway
approves it this once and stores nothing.

On resume LangGraph runs this hook again from the start. Everything before the interrupt is
deterministic except the rater, so when the run answers this call (the run's
:class:`~gth_jupyter.contract.run.RunContext` lists it in ``answering``) the rater is not asked
again and the waiting answer is taken. Answers are read by the resume codec
(:class:`~gth_jupyter.contract.resume.ApprovalAnswer`).
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.config import get_config
from langgraph.types import Command, interrupt

from gth_jupyter.config.schema import ApprovalMode, ApprovalsConfig
from gth_jupyter.contract.names import OWNER_KEY
from gth_jupyter.contract.pending import APPROVAL_INTERRUPT, APPROVAL_REASON
from gth_jupyter.contract.resume import APPROVAL_RESPONSE_SCHEMA, ApprovalAnswer
from gth_jupyter.contract.run import RunContext
from gth_jupyter.middleware.approval_policy import Verdict, decide, gate_reason
from gth_jupyter.middleware.approval_rules import Subject, describe_entry, names_subject
from gth_jupyter.middleware.grants import GrantScope, GrantStore, grant_key, grant_refusal
from gth_jupyter.middleware.rater import (
    Rater,
    RaterError,
    Rating,
    names_a_host,
    names_a_host_in_code,
)
from gth_jupyter.tools.custom import CustomCommandTool, validation_waived
from gth_jupyter.tools.kinds import (
    HINTS_KEY,
    MCP_KEY,
    code_argument,
    code_is_text,
    code_of_call,
    kind_of_call,
)

__all__ = ["APPROVAL_INTERRUPT", "ApprovalsMiddleware"]

log = logging.getLogger(__name__)

AUTO_ROUNDS = 3
#: The response schema of an approval that cannot be granted: no ``grant``.
ONCE_RESPONSE_SCHEMA: dict[str, Any] = {
    **APPROVAL_RESPONSE_SCHEMA,
    "properties": {k: v for k, v in APPROVAL_RESPONSE_SCHEMA["properties"].items() if k != "grant"},
}
Handler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]


def answer_waiting(request: ToolCallRequest) -> bool:
    """True when this run resumes ``request``'s call with the person's answer."""
    runtime = request.runtime
    context = getattr(runtime, "context", None) if runtime is not None else None
    call_id = request.tool_call.get("id")
    return isinstance(context, RunContext) and bool(call_id) and call_id in context.answering


def _host(url: Any) -> str | None:
    try:
        return urlsplit(str(url or "")).hostname
    except ValueError:
        return None


def _error(call: ToolCall, text: str) -> ToolMessage:
    return ToolMessage(text, tool_call_id=call.get("id") or "", name=call["name"], status="error")


def _with_edit_note(content: str, edited: dict[str, Any]) -> str:
    """A result told that the person edited the call; a JSON object result (``run_python``'s,
    which the widget draws) keeps its shape and carries the note as ``userEdited``."""
    note = (
        "the user edited this call before it ran; it ran with the arguments "
        f"{json.dumps(edited, ensure_ascii=False)}, not the ones you sent. Do not re-issue "
        "your original call."
    )
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return json.dumps({"userEdited": note, **value}, ensure_ascii=False)
    return f"Note: {note}\n\n{content}"


def _runs_code(tool: str, args: Any) -> bool:
    """Whether a ``code`` call runs its code now (else it writes code that runs later)."""
    return tool == "run_python" or (
        tool == "insert_cell" and isinstance(args, dict) and bool(args.get("run"))
    )


def code_purpose(tool: str, args: Any) -> str:
    """What a ``code`` call does, for its approval message."""
    values = args if isinstance(args, dict) else {}
    if _runs_code(tool, values):
        return "run Python code in the notebook's kernel"
    if tool == "insert_cell":
        return "insert a code cell into the notebook, which runs when the notebook is run"
    if tool == "edit_cell":
        return "rewrite a code cell of the notebook, which runs when the notebook is run"
    path = values.get("destination" if tool == "move_file" else "path")
    return f"write {path}, a Python module named like an installed one, which the kernel imports"


class ApprovalsMiddleware(AgentMiddleware):
    """Gate tool calls per ``approvals``; ``answers=False`` refuses what would need a person."""

    def __init__(
        self,
        approvals: ApprovalsConfig,
        *,
        rater: Rater | None,
        answers: bool,
        command: str,
        cwd: str,
        grants: GrantStore | None = None,
    ) -> None:
        super().__init__()
        #: Standing approvals the person granted; the host lists and revokes them.
        self.grants = grants if grants is not None else GrantStore()
        self.approvals = approvals
        self.mode: ApprovalMode = approvals.mode or "assisted"
        self.rater = rater
        self.answers = answers
        self.command = command
        self.cwd = cwd
        self._rounds: OrderedDict[str, int] = OrderedDict()

    def _subject(self, request: ToolCallRequest) -> tuple[Subject, str]:
        call, tool = request.tool_call, request.tool
        args = call.get("args") or {}
        # Per call: insert_cell is a write, but a call with run: true is code.
        kind = kind_of_call(tool, args if isinstance(args, dict) else {})
        if kind == "shell":
            return Subject("shell", call["name"], command=str(args.get("command", ""))), kind
        if kind == "code":  # matched by its tool name; the rater reads the code
            return Subject("tool", call["name"], command=code_of_call(tool, args)), kind
        host = _host(args.get("input")) if kind == "network" else None
        if kind != "mcp":  # real names and hints are read only from a tool our MCP code built
            return names_subject(call["name"], host, None), kind
        metadata = (tool.metadata or {}) if tool is not None else {}
        hints = metadata.get(HINTS_KEY)
        hints = hints if isinstance(hints, dict) else None
        mcp = metadata.get(MCP_KEY)  # an MCP tool's real names (its call name may be shortened)
        if isinstance(mcp, dict) and isinstance(mcp.get("server"), str):
            if isinstance(mcp.get("tool"), str):
                subject = Subject("mcpTool", mcp["tool"], server=mcp["server"], hints=hints)
                return subject, kind
        return names_subject(call["name"], host, hints), kind

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Handler) -> Any:
        call = request.tool_call
        if request.tool is None:  # an unknown tool: the tool node answers with its error
            return await handler(request)
        subject, kind = self._subject(request)
        verdict = decide(self.approvals, subject, kind)
        if verdict.action == "deny":
            return self._denied(call, subject, verdict)
        shown, invalid = None, None
        if isinstance(request.tool, CustomCommandTool):
            shown, invalid = request.tool.check(call.get("args") or {})
        answered = answer_waiting(request)
        # A grant covers a call only when no answer for this very call waits (a rejection the
        # person gave it stands even if another call of the batch granted its kind), and never
        # one an escalate rule says must always be asked about.
        escalated = verdict.action == "ask" and verdict.hit is not None
        if invalid is None and not answered and not escalated and self._granted(subject, kind):
            self._reset(subject)
            return await handler(request)
        action, reason, rating = await self._first_answer(verdict, subject, kind, call, answered)
        if isinstance(action, ToolMessage):
            return action
        if invalid is not None:
            why = f"its arguments failed validation ({invalid})"
            reason = f"{reason}; {why}" if action == "ask" and reason else why
            action = "ask"
        if action == "run":
            self._reset(subject)
            return await handler(request)
        return await self._ask(
            request, handler, subject, kind, reason or "", rating, shown, invalid
        )

    async def _first_answer(
        self, verdict: Verdict, subject: Subject, kind: str, call: ToolCall, answered: bool
    ) -> tuple[Any, str | None, Rating | None]:
        if verdict.action == "run":
            return "run", None, None
        if verdict.action == "ask":
            if verdict.hit is not None:
                return (
                    "ask",
                    f"it matches the escalate rule {describe_entry(verdict.hit.entry)}",
                    None,
                )
            runs = _runs_code(call["name"], call.get("args"))
            return "ask", gate_reason(self.mode, kind, "run_python" if runs else subject.name), None
        allowed = verdict.action == "rate_allowed"
        if answered or self.rater is None:
            return "ask", "the auto-rater did not clear it", None
        command = subject.command or ""
        try:
            justification = (call.get("args") or {}).get("justification")
            # Only code says its language, so a rater written for shell commands still fits.
            extra: dict[str, Any] = {"language": "python"} if kind == "code" else {}
            rating = await self.rater.rate(
                command, cwd=self.cwd, justification=justification, **extra
            )
        except RaterError as exc:
            if allowed:  # "could not assess" counts as destructive, which an allow entry runs
                return "run", None, None
            return "ask", f"the auto-rater could not assess it: {exc}", None
        reason = f"the auto-rater rated it {rating.verdict}: {rating.reason}"
        if rating.verdict == "safe" or (allowed and rating.verdict == "destructive"):
            return "run", None, rating
        floored = (names_a_host_in_code if kind == "code" else names_a_host)(command) is not None
        if self.mode == "auto" and rating.verdict == "destructive" and not floored:
            rounds = self._bump(subject)
            if rounds <= AUTO_ROUNDS:
                return self._bounce(call, command, rating, rounds, kind), None, rating
        return "ask", reason, rating

    def _granted(self, subject: Subject, kind: str) -> bool:
        if grant_refusal(subject, kind) is not None:  # never granted, so never covered either
            return False
        key = grant_key(subject, kind)
        return self.grants.match(self._thread(), key, self._owner()) is not None

    def _thread(self) -> str:
        return self._configured("thread_id")

    def _owner(self) -> str:
        return self._configured(OWNER_KEY)

    @staticmethod
    def _configured(name: str) -> str:
        try:
            return str(get_config()["configurable"].get(name, "") or "")
        except Exception:
            return ""

    def _bump(self, subject: Subject) -> int:
        key = self._thread()
        self._rounds[key] = self._rounds.get(key, 0) + 1
        self._rounds.move_to_end(key)
        while len(self._rounds) > 1000:
            self._rounds.popitem(last=False)
        return self._rounds[key]

    def _reset(self, subject: Subject) -> None:
        if subject.command is not None:  # a shell command or code: the rater's rounds end
            self._rounds.pop(self._thread(), None)

    def _bounce(
        self, call: ToolCall, command: str, rating: Rating, rounds: int, kind: str
    ) -> ToolMessage:
        left = AUTO_ROUNDS - rounds
        then = (
            f"after {left} more refusal(s) the user will be asked"
            if left
            else "next time the user will be asked"
        )
        if kind == "code" or "\n" in command:
            what, narrow = "your code", "Narrow the code"
        else:
            what, narrow = f"`{command}`", "Narrow the command"
        return _error(
            call,
            f"Not run: the auto-rater rated {what} {rating.verdict}: {rating.reason} {narrow}, "
            f"explain it in `justification`, or use another tool; {then}.",
        )

    def _denied(self, call: ToolCall, subject: Subject, verdict: Verdict) -> ToolMessage:
        shell = subject.kind == "shell" and subject.command is not None
        what = f"`{subject.command}`" if shell else f"the {call['name']} call"
        rule = describe_entry(verdict.hit.entry) if verdict.hit else "a deny rule"
        return _error(
            call,
            f"Refused: {what} matches the approvals deny rule {rule}, so it never runs. Do not "
            "retry it; find another way or ask the user.",
        )

    async def _ask(
        self,
        request: ToolCallRequest,
        handler: Handler,
        subject: Subject,
        kind: str,
        reason: str,
        rating: Rating | None,
        shown: str | None,
        invalid: str | None,
    ) -> Any:
        call = request.tool_call
        args = call.get("args") or {}
        textual = code_is_text(request.tool, args if isinstance(args, dict) else {})
        code = subject.command if kind == "code" and textual else None
        command = subject.command if subject.kind == "shell" else shown
        if kind == "code":
            command = None
            what = f"{code_purpose(call['name'], args)} ({call['name']})"
        elif command:
            what = f"run `{command}` ({call['name']})"
        else:
            what = f"call {call['name']}"
        if not self.answers:
            return _error(
                call,
                f"Refused: the agent wanted to {what}, which needs approval ({reason}), and "
                f"nobody can answer approvals in the '{self.command}' command. An "
                "approvals.allow entry would let it run.",
            )
        value: dict[str, Any] = {
            "type": APPROVAL_INTERRUPT,
            "reason": APPROVAL_REASON,
            "message": f"The agent wants to {what}: {reason}.",
            "toolCallId": call.get("id"),
            "toolName": call["name"],
            "args": call.get("args") or {},
            "responseSchema": APPROVAL_RESPONSE_SCHEMA,
            "grantable": True,
        }
        refusal = grant_refusal(subject, kind)
        if refusal is not None:  # the card offers no "Always allow" and says why
            value["responseSchema"] = ONCE_RESPONSE_SCHEMA
            value["grantable"] = False
            value["grantReason"] = refusal[0].upper() + refusal[1:] + "."
        if command:
            value["command"] = command
        if code is not None:
            value["code"] = code
            value["language"] = "python"
            if code_argument(request.tool) != "code":  # the argument an edit of the code sets
                value["codeArgument"] = code_argument(request.tool)
        if rating is not None:
            value["rating"] = {"verdict": rating.verdict, "reason": rating.reason}
        if invalid is not None:
            value["validationError"] = invalid
        answer = ApprovalAnswer.from_resume_value(interrupt(value))
        self._reset(subject)
        if not answer.approved:
            return _error(call, self._rejection(call, answer.message, invalid))
        edited = answer.edited_args
        argument = code_argument(request.tool)
        if edited is not None and code is not None and argument != "code" and "code" in edited:
            # A code card edits `code`; insert_cell runs its `source`: the edit lands there.
            edited = {k: v for k, v in edited.items() if k != "code"} | {argument: edited["code"]}
        if edited is not None:
            request = request.override(tool_call={**call, "args": edited})
            # The edit may change the call's kind too (insert_cell given run: true is code).
            subject, kind = self._subject(request)
            again = decide(self.approvals, subject, kind)
            if again.action == "deny":
                return self._denied(call, subject, again)
        if answer.grant is not None:  # what runs (as edited) is what the grant covers
            self._grant(answer.grant, subject, kind, call["name"])
        if invalid is not None or (
            edited is not None and isinstance(request.tool, CustomCommandTool)
        ):
            with validation_waived(call.get("id") or ""):
                result = await handler(request)
        else:
            result = await handler(request)
        if (
            edited is not None
            and isinstance(result, ToolMessage)
            and isinstance(result.content, str)
        ):
            result.content = _with_edit_note(result.content, edited)
        return result

    def _grant(self, scope: GrantScope, subject: Subject, kind: str, tool_name: str) -> None:
        refusal = grant_refusal(subject, kind)
        if refusal is not None:  # a client that ignored `grantable: false`: approved this once
            log.warning(
                "The %s call was approved once; its %r grant was not kept: %s.",
                tool_name,
                scope,
                refusal,
            )
            return
        key = grant_key(subject, kind)
        self.grants.add(scope, self._thread(), key, tool_name, self._owner())

    @staticmethod
    def _rejection(call: ToolCall, message: str | None, invalid: str | None) -> str:
        if invalid is not None:
            text = (
                f"Execution of '{call['name']}' was rejected by user. Validation error: {invalid}"
            )
        else:
            text = f"The user rejected the {call['name']} call; it did not run."
        if message:
            text += f" The user said: {message}"
        return text + " Do not retry it unless the user asks; try another way or ask the user."
