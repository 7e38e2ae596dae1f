"""Gaunt Sloth's ``llm`` options, written for LangChain JS, as keywords of a LangChain Python class.

Gaunt Sloth hands ``llm`` to the LangChain JS constructor, so its users write JS names:
``apiKey``, ``configuration.baseURL``, ``maxTokens``, ``timeout`` in milliseconds. Here each
provider's settings become the keywords of its Python class (``ChatOpenAI``, ``ChatAnthropic``...):

- The key comes from ``apiKeyEnvironmentVariable``, then ``apiKey``, then the provider's own
  variables (``OPEN_ROUTER_API_KEY`` then ``OPENROUTER_API_KEY`` for openrouter). A provider's own
  variable is sent only to that provider's endpoint: with a ``baseURL`` elsewhere, the key must be
  configured. openrouter refuses to start without a key, as Gaunt Sloth does.
- The base URL comes from ``configuration.baseURL`` (``clientOptions.baseURL`` and
  ``anthropicApiUrl`` for Anthropic); ``defaultHeaders`` and ``organization`` likewise.
- Every other option is renamed (``maxTokens`` -> ``max_tokens``) and kept only if the class has
  such a field. One it lacks is a :class:`ModelConfigWarning` naming it, never a keyword that would
  end up in the request body (``model_kwargs``).
"""

from __future__ import annotations

import importlib
import logging
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["PROVIDERS", "ModelConfigWarning", "Provider", "ProviderSettings", "provider_settings"]

logger = logging.getLogger("gth_jupyter.models")


class ModelConfigWarning(UserWarning):
    """An ``llm`` option is ignored: the provider's Python class has no equivalent."""


@dataclass(frozen=True)
class Provider:
    """One ``llm.type``: the LangChain class it builds and where its key comes from."""

    model_provider: str
    """LangChain's ``model_provider`` for ``init_chat_model``."""
    class_path: str
    """``module:Class`` of the chat model, read for its field names."""
    key_variables: tuple[str, ...] = ()
    """Environment variables holding the provider's key, in the order they are read."""
    host: str | None = None
    """The provider's own API host: the only place ``key_variables`` are sent."""
    base_url: str | None = None
    """Base URL when none is configured (openrouter: OpenRouter's, on the OpenAI class)."""
    key_required: str | None = None
    """When set, no key at all is this error (Gaunt Sloth's text)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers sent by default; configured ``defaultHeaders`` override them."""


PROVIDERS: Mapping[str, Provider] = {
    "anthropic": Provider(
        "anthropic",
        "langchain_anthropic:ChatAnthropic",
        ("ANTHROPIC_API_KEY",),
        "api.anthropic.com",
    ),
    "openai": Provider(
        "openai", "langchain_openai:ChatOpenAI", ("OPENAI_API_KEY",), "api.openai.com"
    ),
    "openrouter": Provider(
        "openai",
        "langchain_openai:ChatOpenAI",
        ("OPEN_ROUTER_API_KEY", "OPENROUTER_API_KEY"),
        "openrouter.ai",
        base_url="https://openrouter.ai/api/v1",
        key_required=(
            "You need to define OPEN_ROUTER_API_KEY environment variable, "
            "or set apiKey in your config file."
        ),
        headers={"X-Title": "gth-jupyter"},
    ),
    "ollama": Provider("ollama", "langchain_ollama:ChatOllama"),
    "google-genai": Provider(
        "google_genai",
        "langchain_google_genai:ChatGoogleGenerativeAI",
        ("GOOGLE_API_KEY",),
        "generativelanguage.googleapis.com",
    ),
    "vertexai": Provider("google_vertexai", "langchain_google_vertexai:ChatVertexAI"),
    "groq": Provider("groq", "langchain_groq:ChatGroq", ("GROQ_API_KEY",), "api.groq.com"),
    "deepseek": Provider(
        "deepseek", "langchain_deepseek:ChatDeepSeek", ("DEEPSEEK_API_KEY",), "api.deepseek.com"
    ),
    "xai": Provider("xai", "langchain_xai:ChatXAI", ("XAI_API_KEY",), "api.x.ai"),
    "mistral": Provider(
        "mistralai", "langchain_mistralai:ChatMistralAI", ("MISTRAL_API_KEY",), "api.mistral.ai"
    ),
}
PROVIDERS = {**PROVIDERS, "google": PROVIDERS["google-genai"]}

# Keys of ``llm`` read here or by describe_model, never passed on.
_OWN_KEYS = frozenset({"type", "model", "apiKeyEnvironmentVariable", "modelDisplayName"})
# Objects holding client options: OpenAI's ``configuration``, Anthropic's ``clientOptions``.
_CLIENT_KEYS = ("configuration", "clientOptions")
_KEY_NAMES = frozenset({"apiKey", "api_key", "openAIApiKey", "openaiApiKey", "anthropicApiKey"})
_URL_NAMES = frozenset({"baseURL", "baseUrl", "base_url", "anthropicApiUrl", "basePath"})
# JS names whose Python name is not their snake_case.
_RENAMED: Mapping[str, str] = {"stopSequences": "stop", "defaultHeaders": "default_headers"}
_MILLISECONDS = frozenset({"timeout"})  # LangChain JS: ms; Python: seconds


@dataclass
class ProviderSettings:
    """What :func:`provider_settings` gives: constructor keywords and the options it dropped."""

    kwargs: dict[str, Any]
    ignored: list[str]


def provider_settings(kind: str, llm: Mapping[str, Any]) -> ProviderSettings:
    """Constructor keywords for ``llm`` (of ``llm.type`` ``kind``); warns for dropped options.

    Raises ``ValueError`` with the message for the user when no key may be used.
    """
    provider = PROVIDERS[kind]
    fields = _class_fields(provider.class_path)
    kwargs: dict[str, Any] = {}
    ignored: list[str] = []
    options: list[tuple[str, Any]] = []
    key: Any = None
    base_url: Any = None
    url_path = "configuration.baseURL"
    headers: dict[str, Any] = dict(provider.headers)
    for name, value in llm.items():
        if name in _OWN_KEYS:
            continue
        if name in _CLIENT_KEYS:
            if value is None:
                continue
            if not isinstance(value, Mapping):
                raise ValueError(f"llm.{name} must be an object of provider settings.")
            options.extend((f"{name}.{inner}", v) for inner, v in value.items())
        else:
            options.append((name, value))
    for path, value in options:
        name = path.rsplit(".", 1)[-1]
        if name in _KEY_NAMES:
            key = value
        elif name in _URL_NAMES:
            base_url, url_path = value, path
        elif name in ("defaultHeaders", "default_headers") and isinstance(value, Mapping):
            headers.update(value)
        else:
            target = _RENAMED.get(name) or _snake(name)
            if fields is not None and target not in fields:
                ignored.append(path)
                continue
            kwargs[target] = value / 1000 if name in _MILLISECONDS and _is_number(value) else value
    key = _api_key(provider, llm.get("apiKeyEnvironmentVariable"), key, base_url, url_path)
    if key is not None and fields is not None and "api_key" not in fields:
        ignored.append("apiKey")
    elif key is not None:
        kwargs["api_key"] = key
    if base_url is None:
        base_url = provider.base_url
    for target, value, path in (
        ("base_url", base_url, url_path),
        ("default_headers", headers or None, "configuration.defaultHeaders"),
    ):
        if value is not None and fields is not None and target not in fields:
            ignored.append(path)
        elif value is not None:
            kwargs[target] = value
    # Usage comes on a stream's last chunk only when asked for (OpenAI's
    # ``stream_options.include_usage``; LM Studio and vLLM follow it): ask, unless configured.
    if fields is not None and "stream_usage" in fields and "stream_usage" not in kwargs:
        kwargs["stream_usage"] = True
    for path in ignored:
        _warn(
            f"llm.{path} has no equivalent in {provider.class_path.replace(':', '.')}; "
            "it is ignored."
        )
    return ProviderSettings(kwargs, ignored)


def _api_key(
    provider: Provider, variable: object, configured: Any, base_url: Any, url_path: str
) -> Any:
    """The key to send, or ``None`` to let the class read the provider's own variable."""
    if variable is not None:
        if not isinstance(variable, str) or not variable:
            raise ValueError("llm.apiKeyEnvironmentVariable must name an environment variable.")
        value = os.environ.get(variable)
        if not value:
            raise ValueError(
                f'llm.apiKeyEnvironmentVariable is "{variable}", but the environment variable '
                f"{variable} is not set. Set it to your API key, or remove the setting."
            )
        return value
    if configured is not None:
        return configured
    if not provider.key_variables:
        return None
    url = base_url if base_url is not None else provider.base_url
    if url is not None and _host(url) != provider.host:
        raise ValueError(
            f'llm.{url_path} is "{url}", not {provider.host}, so '
            f"{provider.key_variables[0]} is not sent there. Set llm.apiKey (any text, such as "
            '"none", for a local server that checks none) or llm.apiKeyEnvironmentVariable.'
        )
    for name in provider.key_variables:
        if os.environ.get(name):
            return os.environ[name] if provider.key_required else None
    if provider.key_required:
        raise ValueError(provider.key_required)
    return None


def _class_fields(class_path: str) -> frozenset[str] | None:
    """Field names and aliases of the chat model class; ``None`` if its package is missing."""
    module, _, name = class_path.partition(":")
    try:
        cls = getattr(importlib.import_module(module), name)
    except ImportError:
        return None
    names: set[str] = set()
    for field_name, info in cls.model_fields.items():
        names.add(field_name)
        if info.alias:
            names.add(info.alias)
    return frozenset(names)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _host(url: object) -> str | None:
    return urlsplit(str(url)).hostname


def _warn(message: str) -> None:
    warnings.warn(message, ModelConfigWarning, stacklevel=4)
    logger.warning(message)
