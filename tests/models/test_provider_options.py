"""Gaunt Sloth's documented ``llm`` configs build the LangChain Python model they describe.

The examples are Gaunt Sloth's (its configuration docs, the README's LM Studio and Inception
sections, the presets ``gsloth init`` writes). Each must give the real provider class with the key,
the base URL and the settings the user wrote, and nothing in ``model_kwargs`` (which would be sent
in the request body). No provider is contacted: building a model opens no connection.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI

from gth_jupyter.models import ModelConfigError, resolve_model
from gth_jupyter.models.providers import ModelConfigWarning

OPENAI_ENV = "sk-openai-from-env"
ANTHROPIC_ENV = "sk-ant-from-env"


@pytest.fixture(autouse=True)
def provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every provider's own variable is set, so a key sent to the wrong place would show."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_ENV)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_ENV)
    monkeypatch.setenv("INCEPTION_API_KEY", "sk-inception")
    for name in (
        "OPEN_ROUTER_API_KEY",
        "OPENROUTER_API_KEY",
        "OPENAI_API_BASE",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_URL",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def built(model: Any) -> dict[str, Any]:
    """Key, base URL and leftovers of a built model, whichever class it is."""
    if isinstance(model, ChatAnthropic):
        return {
            "class": "ChatAnthropic",
            "key": model.anthropic_api_key.get_secret_value(),
            "base_url": model.anthropic_api_url,
            "model_kwargs": model.model_kwargs,
        }
    assert isinstance(model, ChatOpenAI)
    return {
        "class": "ChatOpenAI",
        "key": model.openai_api_key.get_secret_value() if model.openai_api_key else None,
        "base_url": model.openai_api_base,
        "model_kwargs": model.model_kwargs,
    }


DOCUMENTED: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "anthropic preset",
        {"type": "anthropic", "model": "claude-sonnet-4-5"},
        {"class": "ChatAnthropic", "key": ANTHROPIC_ENV, "base_url": "https://api.anthropic.com"},
    ),
    (
        "anthropic with apiKey",
        {"type": "anthropic", "model": "claude-sonnet-4-5", "apiKey": "sk-ant-config"},
        {"class": "ChatAnthropic", "key": "sk-ant-config", "base_url": "https://api.anthropic.com"},
    ),
    (
        "openai preset",
        {"type": "openai", "model": "gpt-4o"},
        {"class": "ChatOpenAI", "key": OPENAI_ENV, "base_url": None},
    ),
    (
        "openai with apiKey",
        {"type": "openai", "model": "gpt-4o", "apiKey": "sk-config"},
        {"class": "ChatOpenAI", "key": "sk-config", "base_url": None},
    ),
    (
        "LM Studio",
        {
            "type": "openai",
            "model": "openai/gpt-oss-20b",
            "apiKey": "none",
            "configuration": {"baseURL": "http://127.0.0.1:1234/v1"},
        },
        {"class": "ChatOpenAI", "key": "none", "base_url": "http://127.0.0.1:1234/v1"},
    ),
    (
        "Inception",
        {
            "type": "openai",
            "model": "mercury-coder",
            "apiKeyEnvironmentVariable": "INCEPTION_API_KEY",
            "configuration": {"baseURL": "https://api.inceptionlabs.ai/v1"},
        },
        {
            "class": "ChatOpenAI",
            "key": "sk-inception",
            "base_url": "https://api.inceptionlabs.ai/v1",
        },
    ),
    (
        "openrouter with apiKey",
        {"type": "openrouter", "model": "qwen/qwen3-coder", "apiKey": "sk-or-config"},
        {"class": "ChatOpenAI", "key": "sk-or-config", "base_url": "https://openrouter.ai/api/v1"},
    ),
]


@pytest.mark.parametrize(
    ("llm", "expected"), [c[1:] for c in DOCUMENTED], ids=[c[0] for c in DOCUMENTED]
)
def test_documented_configs_build_the_model_they_describe(
    llm: dict[str, Any], expected: dict[str, Any]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = resolve_model(llm)

    assert built(model) == {**expected, "model_kwargs": {}}
    assert (getattr(model, "model_name", None) or getattr(model, "model", None)) == llm["model"]


@pytest.mark.parametrize("variable", ["OPEN_ROUTER_API_KEY", "OPENROUTER_API_KEY"])
def test_openrouter_reads_its_own_variables_in_gaunt_sloths_order(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, f"sk-or-{variable}")
    if variable == "OPENROUTER_API_KEY":
        monkeypatch.delenv("OPEN_ROUTER_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-second-choice")

    model = resolve_model({"type": "openrouter", "model": "qwen/qwen3-coder"})

    assert built(model) == {
        "class": "ChatOpenAI",
        "key": f"sk-or-{variable}",
        "base_url": "https://openrouter.ai/api/v1",
        "model_kwargs": {},
    }
    assert isinstance(model, ChatOpenAI)
    assert model.default_headers == {"X-Title": "gth-jupyter"}


def test_openrouter_without_its_key_refuses_to_start_and_never_takes_openais() -> None:
    with pytest.raises(ModelConfigError) as info:
        resolve_model({"type": "openrouter", "model": "qwen/qwen3-coder"})

    assert str(info.value) == (
        "You need to define OPEN_ROUTER_API_KEY environment variable, "
        "or set apiKey in your config file."
    )


@pytest.mark.parametrize(
    "llm",
    [
        {"type": "openai", "model": "m", "configuration": {"baseURL": "http://127.0.0.1:1234/v1"}},
        {"type": "anthropic", "model": "m", "clientOptions": {"baseURL": "http://proxy.test/"}},
        {"type": "anthropic", "model": "m", "anthropicApiUrl": "http://proxy.test/"},
    ],
    ids=["openai", "anthropic clientOptions", "anthropicApiUrl"],
)
def test_a_providers_own_key_never_goes_to_another_endpoint(llm: dict[str, Any]) -> None:
    with pytest.raises(ModelConfigError) as info:
        resolve_model(llm)

    message = str(info.value)
    assert "is not sent there" in message and "llm.apiKey" in message
    assert OPENAI_ENV not in message and ANTHROPIC_ENV not in message


def test_js_option_names_map_to_the_python_fields() -> None:
    openai = resolve_model(
        {
            "type": "openai",
            "model": "gpt-4o",
            "apiKey": "sk-config",
            "temperature": 0.3,
            "maxTokens": 512,
            "topP": 0.9,
            "timeout": 30000,
            "maxRetries": 4,
            "streaming": True,
            "configuration": {
                "baseURL": "https://gateway.test/v1",
                "defaultHeaders": {"X-Team": "data"},
                "organization": "org-1",
            },
        }
    )
    anthropic = resolve_model(
        {
            "type": "anthropic",
            "model": "claude-sonnet-4-5",
            "apiKey": "sk-ant-config",
            "temperature": 0.1,
            "maxTokens": 2048,
            "topP": 0.8,
            "topK": 40,
            "timeout": 5000,
            "maxRetries": 1,
            "streaming": True,
            "configuration": {"baseURL": "https://gateway.test", "defaultHeaders": {"X-A": "1"}},
        }
    )

    assert isinstance(openai, ChatOpenAI) and isinstance(anthropic, ChatAnthropic)
    assert (openai.temperature, openai.max_tokens, openai.top_p) == (0.3, 512, 0.9)
    assert (openai.request_timeout, openai.max_retries, openai.streaming) == (30.0, 4, True)
    assert openai.openai_api_base == "https://gateway.test/v1"
    assert (openai.default_headers, openai.openai_organization) == ({"X-Team": "data"}, "org-1")
    assert openai.model_kwargs == {}
    assert (anthropic.temperature, anthropic.max_tokens, anthropic.top_p) == (0.1, 2048, 0.8)
    assert (anthropic.top_k, anthropic.default_request_timeout) == (40, 5.0)
    assert (anthropic.max_retries, anthropic.streaming) == (1, True)
    assert anthropic.anthropic_api_url == "https://gateway.test"
    assert anthropic.default_headers == {"X-A": "1"}
    assert anthropic.model_kwargs == {}


def test_an_option_without_a_python_equivalent_is_a_warning_never_a_request_keyword() -> None:
    with pytest.warns(ModelConfigWarning) as caught:
        model = resolve_model(
            {
                "type": "openai",
                "model": "openai/gpt-oss-20b",
                "apiKey": "none",
                "configuration": {
                    "baseURL": "http://127.0.0.1:1234/v1",
                    "dangerouslyAllowBrowser": True,
                },
                "someJsOnlyFlag": 1,
            }
        )

    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        "llm.configuration.dangerouslyAllowBrowser has no equivalent in "
        "langchain_openai.ChatOpenAI; it is ignored.",
        "llm.someJsOnlyFlag has no equivalent in langchain_openai.ChatOpenAI; it is ignored.",
    ]
    assert isinstance(model, ChatOpenAI) and model.model_kwargs == {}


def test_python_option_names_are_accepted_too() -> None:
    model = resolve_model(
        {"type": "openai", "model": "gpt-4o", "max_retries": 7, "reasoning_effort": "low"}
    )

    assert isinstance(model, ChatOpenAI)
    assert (model.max_retries, model.reasoning_effort, model.model_kwargs) == (7, "low", {})
