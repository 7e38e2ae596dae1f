"""Gaunt Sloth's predefined middleware, by name, built on LangChain's own classes.

- ``summarization``: :class:`langchain.agents.middleware.SummarizationMiddleware`, triggered at
  ``maxTokensBeforeSummary`` tokens (default 10000), keeping ``messagesToKeep`` messages (default
  20), with ``summaryPrompt`` (it must keep LangChain's ``{messages}`` placeholder) and ``model``
  (default: the session model; a ``"provider:model"`` string for ``init_chat_model``, an
  ``llm``-style object, or a model object from a ``.gsloth.config.py``).
- ``anthropic-prompt-caching``: langchain-anthropic's ``AnthropicPromptCachingMiddleware`` with
  ``ttl`` (``5m`` or ``1h``); without the package it is skipped with a warning naming the extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware
from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

from gth_jupyter.config.errors import report
from gth_jupyter.config.live import LiveObjects, is_marker

__all__ = ["anthropic_prompt_caching", "live_model", "summarization"]

DEFAULT_MAX_TOKENS = 10_000
DEFAULT_MESSAGES_TO_KEEP = 20


def live_model(
    setting: Any, session: BaseChatModel, live: LiveObjects, wrong: Exception
) -> BaseChatModel | None:
    """The model a middleware's setting names, where the session decides: the session's own
    model for no setting, the chat model a ``.py`` config's live object is (``wrong`` is raised
    for any other object); ``None`` for a setting of another kind."""
    if setting is None:
        return session
    if not is_marker(setting):
        return None
    found = live.get(setting)
    if isinstance(found, BaseChatModel):
        return found
    raise wrong


def _model(setting: Any, session: BaseChatModel, live: LiveObjects) -> BaseChatModel:
    wrong = ValueError("summarization: 'model' is not a chat model")
    if (found := live_model(setting, session, live, wrong)) is not None:
        return found
    if isinstance(setting, BaseChatModel):
        return setting
    if isinstance(setting, str):
        return init_chat_model(setting)
    if isinstance(setting, Mapping):
        from gth_jupyter.models.resolve import resolve_model

        return resolve_model(setting)
    raise ValueError(
        f"summarization: 'model' must be a model name or an llm object, not {setting!r}"
    )


def summarization(
    settings: Mapping[str, Any], session: BaseChatModel, live: LiveObjects
) -> AgentMiddleware:
    options: dict[str, Any] = {}
    if settings.get("summaryPrompt"):
        options["summary_prompt"] = str(settings["summaryPrompt"])
    return SummarizationMiddleware(
        _model(settings.get("model"), session, live),
        trigger=("tokens", int(settings.get("maxTokensBeforeSummary") or DEFAULT_MAX_TOKENS)),
        keep=("messages", int(settings.get("messagesToKeep") or DEFAULT_MESSAGES_TO_KEEP)),
        **options,
    )


def anthropic_prompt_caching(
    settings: Mapping[str, Any], session: BaseChatModel
) -> AgentMiddleware | None:
    try:
        from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware
    except ImportError:
        report(
            "Middleware anthropic-prompt-caching needs langchain-anthropic "
            "(pip install 'gth-jupyter[anthropic]'); it is skipped."
        )
        return None
    ttl = str(settings.get("ttl") or "5m")
    if ttl not in ("5m", "1h"):
        report(f"Middleware anthropic-prompt-caching: ttl must be '5m' or '1h', not {ttl!r}")
        ttl = "5m"
    if "anthropic" not in session._llm_type:
        report("Middleware anthropic-prompt-caching only works with Anthropic models; it is idle.")
    middleware: AgentMiddleware = AnthropicPromptCachingMiddleware(
        ttl=ttl,  # type: ignore[arg-type]
        unsupported_model_behavior="ignore",
    )
    return middleware
