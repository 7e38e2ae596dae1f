"""How the offline models stream one planned reply.

Both the scripted test model and the demo model decide a whole answer (a ``Reply``) when they are
called, then stream it the way a provider does: reasoning first, then the text, then the tool
calls, every chunk carrying the same message id so LangChain merges them into one ``AIMessage``.

Text streams token by token (a word plus the whitespace after it), so the chunks concatenate to
the text exactly. Tool calls stream as ``tool_call_chunks``: a first chunk with id, name and empty
args, then the JSON of the args in a few pieces, one ``index`` per call.
"""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

from langchain_core.messages import AIMessageChunk
from langchain_core.messages.ai import InputTokenDetails, OutputTokenDetails, UsageMetadata
from langchain_core.messages.tool import tool_call_chunk

_TOKEN = re.compile(r"\S+\s*|\s+")

# A tool call's args stream in at least this many pieces, and pieces never grow past this size.
_MIN_ARG_PIECES = 3
_MAX_ARG_PIECE = 40


@dataclass(frozen=True)
class PlannedToolCall:
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One model turn: what to stream, and optionally an error to raise once it has streamed."""

    text: str = ""
    reasoning: str | None = None
    tool_calls: Sequence[PlannedToolCall] = ()
    error: Exception | None = None
    delay_ms: float | None = None
    #: The call's token counts as AG-UI names them (``inputTokens``…); ``None``: estimated.
    usage: Mapping[str, int] | None = None


def split_tokens(text: str) -> list[str]:
    """A word plus its following whitespace per token; ``"".join(split_tokens(t)) == t``."""
    return _TOKEN.findall(text)


def split_args(args_json: str) -> list[str]:
    """The args JSON in a few pieces, so that a consumer sees tool-call args stream."""
    if not args_json:
        return []
    pieces = max(_MIN_ARG_PIECES, math.ceil(len(args_json) / _MAX_ARG_PIECE))
    size = max(1, math.ceil(len(args_json) / pieces))
    return [args_json[i : i + size] for i in range(0, len(args_json), size)]


def new_message_id(prefix: str) -> str:
    return f"{prefix}-{uuid4().hex[:12]}"


def new_tool_call_id(index: int) -> str:
    return f"call_{index}_{secrets.token_hex(4)}"


def usage_metadata(counts: Mapping[str, int]) -> UsageMetadata:
    """LangChain's ``usage_metadata`` for counts named as AG-UI names them."""
    inputs, outputs = int(counts.get("inputTokens", 0)), int(counts.get("outputTokens", 0))
    return UsageMetadata(
        input_tokens=inputs,
        output_tokens=outputs,
        total_tokens=int(counts.get("totalTokens", inputs + outputs)),
        input_token_details=InputTokenDetails(
            cache_read=int(counts.get("cachedInputTokens", 0)),
            cache_creation=int(counts.get("cacheWriteInputTokens", 0)),
        ),
        output_token_details=OutputTokenDetails(reasoning=int(counts.get("reasoningTokens", 0))),
    )


def reply_chunks(
    reply: Reply,
    message_id: str,
    usage: UsageMetadata | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Iterator[AIMessageChunk]:
    """The chunks of ``reply`` in stream order, then an empty chunk marked ``"last"``.

    Content-block indices follow Anthropic's layout, so that no two blocks share one: reasoning
    at 0, the text after it, then one index per tool call. When the reply carries an error, the
    stream stops after the text without the closing chunk (the caller raises the error).
    The closing chunk carries the call's ``usage`` and response ``metadata`` (model name and
    provider), as providers send them last.
    """
    with_reasoning = bool(reply.reasoning)
    for delta in split_tokens(reply.reasoning or ""):
        block = {"type": "reasoning", "reasoning": delta, "index": 0}
        yield AIMessageChunk(content=[block], id=message_id)
    text_index = int(with_reasoning)
    for delta in split_tokens(reply.text):
        if with_reasoning:
            # After a reasoning block the content is a list; the text becomes its second block.
            text_block = {"type": "text", "text": delta, "index": text_index}
            yield AIMessageChunk(content=[text_block], id=message_id)
        else:
            yield AIMessageChunk(content=delta, id=message_id)
    if reply.error is not None:
        return
    first_tool_index = text_index + int(bool(reply.text))
    for ordinal, call in enumerate(reply.tool_calls):
        index = first_tool_index + ordinal
        call_id = call.id or new_tool_call_id(ordinal)
        first = tool_call_chunk(name=call.name, args="", id=call_id, index=index)
        yield AIMessageChunk(content="", tool_call_chunks=[first], id=message_id)
        for piece in split_args(json.dumps(dict(call.args), ensure_ascii=False)):
            more = tool_call_chunk(name=None, args=piece, id=None, index=index)
            yield AIMessageChunk(content="", tool_call_chunks=[more], id=message_id)
    # A separate closing chunk: on a chunk that also carried tool_call_chunks, "last" would make
    # ``content_blocks`` parse that chunk's partial args as a whole call.
    yield AIMessageChunk(
        content=[] if with_reasoning else "",
        id=message_id,
        chunk_position="last",
        usage_metadata=usage,
        response_metadata=dict(metadata or {}),
    )
