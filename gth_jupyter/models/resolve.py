"""From the ``llm`` section of ``.gsloth.config.json`` to a LangChain chat model.

``llm`` is ``{type, model, configuration?, apiKeyEnvironmentVariable?, ...}`` as in Gaunt Sloth.
No ``llm`` means the offline demo model; ``demo`` and ``fake`` are built here; every other type
maps to a LangChain provider created by ``init_chat_model``, its options (written with Gaunt
Sloth's LangChain JS names) translated by ``providers.py``. Nothing is contacted while resolving.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, ValidationError

from gth_jupyter.contract.errors import CodedError
from gth_jupyter.models.demo.model import DEMO_MODEL_NAME, DemoChatModel
from gth_jupyter.models.fake import FakeChatModel
from gth_jupyter.models.providers import PROVIDERS, provider_settings

KNOWN_TYPES: tuple[str, ...] = ("demo", "fake", *PROVIDERS)

_EXTRAS: Mapping[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "ollama": "ollama",
    "google_genai": "google",
}
_PACKAGES: Mapping[str, str] = {
    "anthropic": "langchain-anthropic",
    "openai": "langchain-openai",
    "ollama": "langchain-ollama",
    "google_genai": "langchain-google-genai",
    "google_vertexai": "langchain-google-vertexai",
    "groq": "langchain-groq",
    "deepseek": "langchain-deepseek",
    "xai": "langchain-xai",
    "mistralai": "langchain-mistralai",
}


class ModelConfigError(CodedError, ValueError):
    """The ``llm`` configuration cannot give a model; the message says what to change."""

    code = "model_config_error"


class MissingProviderError(ModelConfigError):
    """The provider's LangChain package is not installed; the message says what to install."""

    code = "missing_provider"


class ModelInfo(BaseModel):
    """What a front end shows about the model (Gaunt Sloth's ``/info``)."""

    model_config = ConfigDict(frozen=True)

    provider: str
    model: str | None
    offline: bool
    """True when the model answers without any service: the demo and the scripted fake."""


def resolve_model(llm: Mapping[str, Any] | None) -> BaseChatModel:
    """The chat model for an ``llm`` config section (``None``: the offline demo)."""
    if llm is None:
        return DemoChatModel()
    kind = llm.get("type")
    if not isinstance(kind, str) or not kind:
        raise ModelConfigError(f"llm.type is missing. Known types: {', '.join(KNOWN_TYPES)}.")
    settings = {k: v for k, v in llm.items() if k != "type"}
    if kind == "demo":
        return _build_offline(DemoChatModel, settings, kind)
    if kind == "fake":
        return _build_offline(FakeChatModel, settings, kind)
    if kind not in PROVIDERS:
        raise ModelConfigError(
            f'llm.type "{kind}" is not known. Known types: {", ".join(KNOWN_TYPES)}.'
        )
    return _build_provider(kind, llm)


def describe_model(llm: Mapping[str, Any] | None, model: BaseChatModel | None = None) -> ModelInfo:
    """Provider and model name for UIs and ``/info``: as configured, else read off ``model``."""
    kind = llm.get("type") if llm is not None else None
    if not isinstance(kind, str) or not kind:
        kind = "demo" if model is None else _llm_type(model)
    if kind == "demo":
        return ModelInfo(provider="demo", model=DEMO_MODEL_NAME, offline=True)
    if kind == "fake":
        return ModelInfo(provider="fake", model="scripted", offline=True)
    name = (llm or {}).get("modelDisplayName") or (llm or {}).get("model")
    if not name and model is not None:
        name = getattr(model, "model_name", None) or getattr(model, "model", None)
    return ModelInfo(provider=kind, model=str(name) if name else None, offline=False)


def _llm_type(model: BaseChatModel) -> str:
    try:
        return str(model._llm_type)
    except Exception:
        return "unknown"


def _build_offline(cls: type[BaseChatModel], settings: dict[str, Any], kind: str) -> BaseChatModel:
    if kind == "fake" and "responses" not in settings:
        raise ModelConfigError('llm.type "fake" needs llm.responses, a list of scripted replies.')
    try:
        return cls(**settings)
    except ValidationError as e:
        details = "; ".join(
            f"llm.{'.'.join(str(p) for p in d['loc'])}: {d['msg']}" for d in e.errors()
        )
        raise ModelConfigError(f'llm.type "{kind}": {details}') from None
    except ValueError as e:
        raise ModelConfigError(f"llm.{e}") from None


def _build_provider(kind: str, llm: Mapping[str, Any]) -> BaseChatModel:
    provider = PROVIDERS[kind].model_provider
    model = llm.get("model")
    if not isinstance(model, str) or not model:
        raise ModelConfigError(f'llm.type "{kind}" needs llm.model, the name of the model to use.')
    try:
        kwargs = provider_settings(kind, llm).kwargs
    except ValueError as e:
        raise ModelConfigError(str(e)) from None
    try:
        chat_model: BaseChatModel = init_chat_model(model, model_provider=provider, **kwargs)
    except ImportError as e:
        raise MissingProviderError(_missing_provider_message(kind, provider)) from e
    except Exception as e:
        raise ModelConfigError(f'llm.type "{kind}", model "{model}" could not start: {e}') from e
    return chat_model


def _missing_provider_message(kind: str, provider: str) -> str:
    package = _PACKAGES.get(provider, f"langchain-{provider.replace('_', '-')}")
    extra = _EXTRAS.get(provider)
    install = f"pip install 'gth-jupyter[{extra}]'" if extra else f"pip install {package}"
    return f'llm.type "{kind}" needs the package {package}. Install it with: {install}'
