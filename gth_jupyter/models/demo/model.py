"""The default model when there is no configuration: an offline, rule-based demo.

It needs no key and no network, streams at a readable pace, and shows what the chat can do: a
streamed Markdown answer, a webcam photo (``capture_image``) and an A2UI form
(``show_a2ui_surface``). Its rules live in ``_rules``; its form in ``_form``.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import ConfigDict, Field

from gth_jupyter.models._base import ReplyChatModel
from gth_jupyter.models._reply import Reply
from gth_jupyter.models.demo._rules import plan_demo_reply

DEMO_MODEL_NAME = "gth-demo (offline)"


class DemoChatModel(ReplyChatModel):
    """Answers by rules on the last message, streamed token by token (12 ms apart by default)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid")
    message_id_prefix = "demo"
    provider_name = "demo"
    model_label = DEMO_MODEL_NAME

    model: str = DEMO_MODEL_NAME
    token_delay_ms: float = Field(default=12, alias="tokenDelayMs", ge=0)

    @property
    def _llm_type(self) -> str:
        return "demo"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model}

    def _plan(self, messages: list[BaseMessage], tool_names: list[str]) -> Reply:
        return plan_demo_reply(messages, tool_names)

    def _delay_ms(self, reply: Reply) -> float:
        return self.token_delay_ms
