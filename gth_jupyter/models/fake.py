"""The scripted chat model for tests and teaching notebooks.

Configured like Gaunt Sloth's ``fake`` provider, one scripted response per model call::

    {"llm": {"type": "fake", "tokenDelayMs": 0, "recordPath": null, "responses": [
        "Hello!",
        {"content": "Let me look.", "toolCalls": [{"name": "capture_image", "args": {}}]},
        {"reasoning": "The user wants...", "content": "Done."},
        {"content": "Half an answer", "error": "provider overloaded"}
    ]}}

It streams like a real provider (see ``_reply``), records what it was sent (``received``, and one
JSON line per call in ``recordPath``), and keeps one script position shared by every
``bind_tools`` copy, since they all wrap this instance.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from gth_jupyter.contract.errors import CodedError
from gth_jupyter.models._base import ReplyChatModel
from gth_jupyter.models._reply import PlannedToolCall, Reply


class FakeModelError(CodedError):
    """A scripted provider failure (``"error"`` in a response), raised after its text streamed."""

    code = "model_error"


class FakeResponsesExhaustedError(CodedError):
    """The model was called more times than the script has responses."""

    code = "fake_responses_exhausted"


class FakeToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class FakeUsage(BaseModel):
    """A scripted call's token counts, named as AG-UI's ``TokenUsage`` names them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    inputTokens: int = Field(default=0, ge=0)  # the wire's names
    outputTokens: int = Field(default=0, ge=0)
    totalTokens: int | None = Field(default=None, ge=0)
    reasoningTokens: int = Field(default=0, ge=0)
    cachedInputTokens: int = Field(default=0, ge=0)
    cacheWriteInputTokens: int = Field(default=0, ge=0)


class FakeResponse(BaseModel):
    """One scripted model turn; a bare string in the script means ``{"content": string}``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    content: str = ""
    tool_calls: list[FakeToolCall] = Field(default_factory=list, alias="toolCalls")
    reasoning: str | None = None
    error: str | None = None
    delay_ms: float | None = Field(default=None, alias="delayMs", ge=0)
    #: The usage this call reports; absent: estimated from what was sent and answered.
    usage: FakeUsage | None = None


def parse_fake_responses(items: object) -> list[FakeResponse]:
    """Validates a script; a bad item raises ``ValueError`` naming it, as in
    ``responses[2].toolCalls[0].name: Field required``."""
    if not isinstance(items, Sequence) or isinstance(items, str | bytes):
        raise ValueError("responses: expected a list of strings or objects")
    parsed: list[FakeResponse] = []
    for index, item in enumerate(items):
        if isinstance(item, FakeResponse):
            parsed.append(item)
        elif isinstance(item, str):
            parsed.append(FakeResponse(content=item))
        elif isinstance(item, dict):
            try:
                parsed.append(FakeResponse.model_validate(item))
            except ValidationError as e:
                raise ValueError(_describe_errors(index, e)) from None
        else:
            kind = type(item).__name__
            raise ValueError(f"responses[{index}]: expected a string or an object, got {kind}")
    return parsed


def _describe_errors(index: int, error: ValidationError) -> str:
    lines = []
    for detail in error.errors():
        path = f"responses[{index}]"
        for part in detail["loc"]:
            path += f"[{part}]" if isinstance(part, int) else f".{part}"
        lines.append(f"{path}: {detail['msg']}")
    return "; ".join(lines)


class FakeChatModel(ReplyChatModel):
    """Answers each call with the next scripted response, streamed token by token."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    message_id_prefix = "fake"
    provider_name = "fake"
    model_label = "scripted"

    responses: list[FakeResponse] = Field(default_factory=list)
    token_delay_ms: float = Field(default=0, alias="tokenDelayMs", ge=0)
    record_path: str | None = Field(default=None, alias="recordPath")

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: int = PrivateAttr(default=0)
    _received: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _received_tool_names: list[list[str]] = PrivateAttr(default_factory=list)

    def __init__(self, **data: Any) -> None:
        if "responses" in data:
            data["responses"] = parse_fake_responses(data["responses"])
        super().__init__(**data)

    @property
    def _llm_type(self) -> str:
        return "fake"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": "scripted", "responses": len(self.responses)}

    @property
    def received(self) -> list[list[BaseMessage]]:
        """The messages of every call so far, in call order."""
        return self._received

    @property
    def received_tool_names(self) -> list[list[str]]:
        """The names of the tools bound for every call so far, in call order."""
        return self._received_tool_names

    @property
    def calls(self) -> int:
        """How many times the model was called (the script position)."""
        return self._calls

    def reset(self) -> None:
        """Rewinds the script and forgets what was received (the record file is kept)."""
        with self._lock:
            self._calls = 0
            self._received.clear()
            self._received_tool_names.clear()

    def _take(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        with self._lock:
            position = self._calls
            self._calls += 1
            self._received.append(list(messages))
            self._received_tool_names.append(list(tool_names))
        if position >= len(self.responses):
            raise FakeResponsesExhaustedError(
                "The fake model has no scripted response left: all "
                f"{len(self.responses)} were used. Add more entries to llm.responses."
            )
        return _to_reply(self.responses[position])

    def _plan(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        self._write_record(messages, tool_names)
        return self._take(messages, tool_names)

    async def _aplan(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        if self.record_path:
            await asyncio.to_thread(self._write_record, messages, tool_names)
        return self._take(messages, tool_names)

    def _write_record(self, messages: list[BaseMessage], tool_names: list[str]) -> None:
        if not self.record_path:
            return
        line = {"messages": [m.model_dump() for m in messages], "tools": tool_names}
        with Path(self.record_path).open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")

    def _delay_ms(self, reply: Reply) -> float:
        return self.token_delay_ms if reply.delay_ms is None else reply.delay_ms


def _to_reply(response: FakeResponse) -> Reply:
    return Reply(
        text=response.content,
        reasoning=response.reasoning,
        tool_calls=[PlannedToolCall(c.name, c.args, c.id) for c in response.tool_calls],
        error=FakeModelError(response.error) if response.error is not None else None,
        delay_ms=response.delay_ms,
        usage=response.usage.model_dump(exclude_none=True) if response.usage else None,
    )
