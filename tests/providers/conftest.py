"""The provider tests' fixtures: a local stub of the providers' APIs, and every provider's own
key in the environment (so a key sent to the stub by mistake would show)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.providers.stubs import StubServer

ENV_KEYS = {
    "OPENAI_API_KEY": "sk-env-openai-must-not-leak",
    "ANTHROPIC_API_KEY": "sk-env-anthropic-must-not-leak",
    "OPEN_ROUTER_API_KEY": "sk-env-openrouter-must-not-leak",
}


@pytest.fixture(autouse=True)
def other_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every provider's own variable is set, so a key sent to the stub by mistake would show."""
    for name, value in ENV_KEYS.items():
        monkeypatch.setenv(name, value)
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def stub() -> Any:
    with StubServer() as server:
        yield server
