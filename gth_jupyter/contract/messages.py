"""How the contract reads a checkpointed message: its public id, a tool result's text, and whether
it starts a turn."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage

from .names import INJECTED_MARK

__all__ = ["public_message_id", "starts_turn", "tool_content_text"]

_RUN_ID_PREFIX = "lc_run--"


def public_message_id(message_id: str | None) -> str | None:
    """LangChain's generated ``lc_run--<uuid>`` ids, shortened to the uuid for the wire."""
    if message_id and message_id.startswith(_RUN_ID_PREFIX):
        return message_id[len(_RUN_ID_PREFIX) :]
    return message_id


def tool_content_text(content: Any) -> str:
    """A tool result's content as the text a client shows."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" for b in content
    ):
        return "".join(str(b.get("text", "")) for b in content)
    return json.dumps(content, ensure_ascii=False, default=str)


def starts_turn(message: BaseMessage) -> bool:
    """A user message the person sent (not one middleware added for the model)."""
    return message.type == "human" and not message.additional_kwargs.get(INJECTED_MARK)
