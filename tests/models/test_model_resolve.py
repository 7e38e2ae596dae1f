"""From the ``llm`` config section to a model, and the errors a user gets when it is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from gth_jupyter.models import (
    DemoChatModel,
    FakeChatModel,
    MissingProviderError,
    ModelConfigError,
    describe_model,
    resolve_model,
)
from gth_jupyter.models import resolve as resolve_module


@pytest.fixture
def captured_init(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replaces init_chat_model so provider configs resolve without provider packages."""
    calls: list[dict[str, Any]] = []

    def fake_init(model: str, **kwargs: Any) -> FakeChatModel:
        calls.append({"model": model, **kwargs})
        return FakeChatModel(responses=[])

    monkeypatch.setattr(resolve_module, "init_chat_model", fake_init)
    return calls


def test_no_config_gives_the_offline_demo() -> None:
    model = resolve_model(None)

    assert isinstance(model, DemoChatModel)
    info = describe_model(None, model)
    assert (info.provider, info.model, info.offline) == ("demo", "gth-demo (offline)", True)


async def test_demo_and_fake_types_take_their_settings() -> None:
    demo = resolve_model({"type": "demo", "tokenDelayMs": 0})
    fake = resolve_model(
        {"type": "fake", "responses": ["Scripted hello"], "tokenDelayMs": 0, "recordPath": None}
    )

    assert isinstance(demo, DemoChatModel) and demo.token_delay_ms == 0
    assert (await fake.ainvoke("x")).content == "Scripted hello"
    info = describe_model({"type": "fake", "responses": []}, fake)
    assert (info.provider, info.model) == ("fake", "scripted")


def test_a_bad_fake_script_names_the_config_path() -> None:
    with pytest.raises(ModelConfigError, match=r"llm\.responses\[0\]\.toolCalls\[0\]\.name"):
        resolve_model({"type": "fake", "responses": [{"toolCalls": [{}]}]})

    with pytest.raises(ModelConfigError, match=r"needs llm\.responses"):
        resolve_model({"type": "fake"})


def test_an_unknown_type_lists_the_known_ones() -> None:
    with pytest.raises(ModelConfigError) as info:
        resolve_model({"type": "gpt", "model": "x"})

    assert info.value.code == "model_config_error"
    assert 'llm.type "gpt" is not known' in str(info.value)
    for known in ("anthropic", "openai", "ollama", "google-genai", "demo", "fake"):
        assert known in str(info.value)


def test_a_missing_api_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_TEAM_KEY", raising=False)

    with pytest.raises(ModelConfigError, match="environment variable MY_TEAM_KEY is not set"):
        resolve_model(
            {
                "type": "anthropic",
                "model": "claude-sonnet-4-5",
                "apiKeyEnvironmentVariable": "MY_TEAM_KEY",
            }
        )


def test_provider_settings_reach_the_provider(
    monkeypatch: pytest.MonkeyPatch, captured_init: list[dict[str, Any]]
) -> None:
    monkeypatch.setenv("MY_TEAM_KEY", "sk-team")
    monkeypatch.setenv("OPEN_ROUTER_API_KEY", "sk-or")  # openrouter refuses to start without it

    resolve_model(
        {
            "type": "google-genai",
            "model": "gemini-2.5-flash",
            "apiKeyEnvironmentVariable": "MY_TEAM_KEY",
            "configuration": {"temperature": 0.2},
            "max_retries": 1,
        }
    )
    resolve_model({"type": "openrouter", "model": "meta/llama"})

    google, openrouter = captured_init
    assert google == {
        "model": "gemini-2.5-flash",
        "model_provider": "google_genai",
        "api_key": "sk-team",
        "temperature": 0.2,
        "max_retries": 1,
    }
    assert openrouter["model_provider"] == "openai"
    assert openrouter["base_url"] == "https://openrouter.ai/api/v1"


def test_a_missing_provider_package_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_package(model: str, **kwargs: Any) -> Any:
        raise ImportError("No module named 'langchain_anthropic'")

    monkeypatch.setattr(resolve_module, "init_chat_model", no_package)

    with pytest.raises(MissingProviderError) as anthropic:
        resolve_model({"type": "anthropic", "model": "claude-sonnet-4-5"})
    with pytest.raises(MissingProviderError) as groq:
        resolve_model({"type": "groq", "model": "llama"})

    assert anthropic.value.code == "missing_provider"
    assert str(anthropic.value) == (
        'llm.type "anthropic" needs the package langchain-anthropic. '
        "Install it with: pip install 'gth-jupyter[anthropic]'"
    )
    assert "pip install langchain-groq" in str(groq.value)


def test_a_provider_type_needs_a_model_name() -> None:
    with pytest.raises(ModelConfigError, match=r"needs llm\.model"):
        resolve_model({"type": "openai"})


def test_describe_model_shows_the_configured_provider_and_model(
    captured_init: list[dict[str, Any]],
) -> None:
    config = {"type": "anthropic", "model": "claude-sonnet-4-5"}

    info = describe_model(config, resolve_model(config))

    assert (info.provider, info.model, info.offline) == ("anthropic", "claude-sonnet-4-5", False)
