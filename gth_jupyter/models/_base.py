"""The shared chassis of the offline chat models: plan a ``Reply``, then stream it natively.

A subclass says what to answer (``_plan`` and its async twin ``_aplan``) and how fast
(``_delay_ms``); this class turns that into LangChain's four entry points. ``_astream`` is native
async (``asyncio.sleep`` between tokens), since a sync-only ``_stream`` would hand every chunk
through a thread when an async graph drives the model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import (
    agenerate_from_stream,
    generate_from_stream,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from gth_jupyter.contract.usage import estimate_tokens
from gth_jupyter.models._reply import Reply, new_message_id, reply_chunks, usage_metadata


def bound_tool_names(kwargs: Mapping[str, Any]) -> list[str]:
    """Names of the tools bound with ``bind_tools``, as they reach the model's call kwargs."""
    names: list[str] = []
    for tool in kwargs.get("tools") or ():
        function = tool.get("function") if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str):
            names.append(name)
    return names


def _text_of(content: Any) -> str:
    """The text of a message's content; a media block counts as its size in text."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping):
            text = block.get("text")
            parts.append(text if isinstance(text, str) else json.dumps(block, default=str)[:4000])
    return "".join(parts)


class ReplyChatModel(BaseChatModel):
    """A chat model that decides a whole ``Reply`` per call and streams it token by token."""

    message_id_prefix: ClassVar[str] = "reply"
    #: How the replies name their provider and model (``response_metadata``).
    provider_name: ClassVar[str] = "offline"
    model_label: ClassVar[str] = "offline"

    def _plan(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        raise NotImplementedError

    async def _aplan(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        return self._plan(messages, tool_names)

    def _delay_ms(self, reply: Reply) -> float:
        return 0.0

    def _chunks(
        self, reply: Reply, messages: list[BaseMessage], kwargs: Mapping[str, Any]
    ) -> Iterator[AIMessageChunk]:
        """The reply's chunks, the last with the call's usage: the reply's own counts, else
        an estimate (about four characters a token) of what was sent and what it answers."""
        counts = reply.usage
        if counts is None:
            sent = sum(estimate_tokens(_text_of(m.content)) for m in messages)
            sent += estimate_tokens(json.dumps(kwargs.get("tools") or [], default=str))
            answer = reply.text + (reply.reasoning or "")
            answer += "".join(json.dumps(dict(c.args), default=str) for c in reply.tool_calls)
            counts = {
                "inputTokens": sent,
                "outputTokens": estimate_tokens(answer) + 5 * len(reply.tool_calls),
                "reasoningTokens": estimate_tokens(reply.reasoning or ""),
            }
        metadata = {"model_name": self.model_label, "model_provider": self.provider_name}
        message_id = new_message_id(self.message_id_prefix)
        return reply_chunks(reply, message_id, usage_metadata(counts), metadata)

    def bind_tools(
        self,
        tools: Sequence[Mapping[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Binds the tools' OpenAI-style schemas; the call sees them as ``kwargs["tools"]``.

        The binding wraps this very instance, so state such as a script position is shared by
        every bound copy.
        """
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        reply = self._plan(messages, bound_tool_names(kwargs))
        delay = self._delay_ms(reply) / 1000
        for i, chunk in enumerate(self._chunks(reply, messages, kwargs)):
            if i and delay > 0:
                time.sleep(delay)
            yield ChatGenerationChunk(message=chunk)
        if reply.error is not None:
            raise reply.error

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        reply = await self._aplan(messages, bound_tool_names(kwargs))
        delay = self._delay_ms(reply) / 1000
        for i, chunk in enumerate(self._chunks(reply, messages, kwargs)):
            if i and delay > 0:
                await asyncio.sleep(delay)
            yield ChatGenerationChunk(message=chunk)
        if reply.error is not None:
            raise reply.error

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))
