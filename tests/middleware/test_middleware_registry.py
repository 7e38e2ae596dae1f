"""build_middleware: the approvals gate first, then named and Python-config middleware in order."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware

from gth_jupyter.config import ConfigError, GthConfig, GthConfigWarning, load_config
from gth_jupyter.middleware import ApprovalsMiddleware, build_middleware
from gth_jupyter.middleware.image_injection import FrontendImageInjectionMiddleware
from gth_jupyter.models import FakeChatModel

SESSION = FakeChatModel(responses=["hi"])


def effective(tmp_path: Path, data: dict[str, Any], command: str = "notebook") -> Any:
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(data))
    (tmp_path / "home").mkdir(exist_ok=True)
    return load_config(cwd=tmp_path, home=tmp_path / "home").for_command(command)


def build(eff: Any, tmp_path: Path, answers: bool = True) -> list[AgentMiddleware]:
    return build_middleware(eff, model=SESSION, cwd=tmp_path, answers_approvals=answers)


def test_the_gate_comes_first_and_is_configured(tmp_path: Path) -> None:
    (first,) = build(GthConfig().for_command("api"), tmp_path, answers=False)
    assert isinstance(first, ApprovalsMiddleware)
    assert first.mode == "assisted" and first.answers is False and first.command == "api"
    assert first.rater is not None and first.rater.model is SESSION
    (manual,) = build(effective(tmp_path, {"approvals": "manual"}), tmp_path)
    assert isinstance(manual, ApprovalsMiddleware) and manual.rater is None


def test_summarization_takes_gaunt_sloths_settings(tmp_path: Path) -> None:
    eff = effective(
        tmp_path,
        {
            "middleware": [
                "summarization",
                {
                    "name": "summarization",
                    "maxTokensBeforeSummary": 8000,
                    "messagesToKeep": 5,
                    "summaryPrompt": "Summarise: {messages}",
                },
                "frontend-image-injection",
            ]
        },
    )
    _, default, custom, image = build(eff, tmp_path)
    assert isinstance(default, SummarizationMiddleware) and isinstance(
        custom, SummarizationMiddleware
    )
    assert isinstance(image, FrontendImageInjectionMiddleware)
    assert default.model is SESSION
    assert default.trigger == ("tokens", 10000) and default.keep == ("messages", 20)
    assert custom.trigger == ("tokens", 8000) and custom.keep == ("messages", 5)
    assert custom.summary_prompt == "Summarise: {messages}"


def test_anthropic_prompt_caching_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("langchain_anthropic")
    eff = effective(tmp_path, {"middleware": [{"name": "anthropic-prompt-caching", "ttl": "1h"}]})
    with pytest.warns(GthConfigWarning, match="only works with Anthropic models"):
        _, caching = build(eff, tmp_path)
    assert type(caching).__name__ == "AnthropicPromptCachingMiddleware"
    assert caching.ttl == "1h"  # type: ignore[attr-defined]


def test_anthropic_prompt_caching_without_the_package_warns_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)
    monkeypatch.setitem(sys.modules, "langchain_anthropic.middleware", None)
    eff = effective(tmp_path, {"middleware": ["anthropic-prompt-caching"]})
    with pytest.warns(
        GthConfigWarning,
        match=r"needs langchain-anthropic \(pip install 'gth-jupyter\[anthropic\]'\)",
    ):
        assert len(build(eff, tmp_path)) == 1


def test_unknown_or_broken_middleware_only_warns(tmp_path: Path) -> None:
    eff = effective(
        tmp_path,
        {"middleware": ["no-such-thing", {"name": "summarization", "model": {"type": "nope"}}]},
    )
    with pytest.warns(GthConfigWarning) as caught:
        assert len(build(eff, tmp_path)) == 1
    messages = [str(w.message) for w in caught]
    assert "Unknown middleware: no-such-thing" in messages
    assert any(m.startswith("Middleware summarization could not be built") for m in messages)


def test_python_config_middleware_objects_keep_their_place(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / ".gsloth.config.py").write_text(
        textwrap.dedent(
            """
            from langchain.agents.middleware import AgentMiddleware

            class Logger(AgentMiddleware):
                pass

            def configure():
                return {"middleware": [Logger(), "summarization"]}
            """
        )
    )
    eff = load_config(cwd=tmp_path, home=tmp_path / "home").for_command("notebook")
    _, logger, summary = build(eff, tmp_path)
    assert type(logger).__name__ == "Logger" and isinstance(summary, SummarizationMiddleware)


def test_the_rater_may_name_an_identity_profile(tmp_path: Path) -> None:
    profile = tmp_path / ".gsloth" / ".gsloth-settings" / "safety-rater"
    profile.mkdir(parents=True)
    (profile / ".gsloth.config.json").write_text(
        json.dumps({"llm": {"type": "fake", "responses": ['{"verdict": "safe"}']}})
    )
    (gate,) = build(
        effective(tmp_path, {"approvals": {"mode": "auto", "rater": "safety-rater"}}), tmp_path
    )
    assert isinstance(gate, ApprovalsMiddleware) and gate.rater is not None
    assert isinstance(gate.rater.model, FakeChatModel) and gate.rater.model is not SESSION
    with pytest.raises(ConfigError, match="identity profile 'missing'"):
        build(effective(tmp_path, {"approvals": {"rater": "missing"}}), tmp_path)


def test_frontend_image_injection_is_built_here_for_the_configured_provider(
    tmp_path: Path,
) -> None:
    eff = effective(
        tmp_path,
        {
            "llm": {"type": "anthropic", "model": "claude-sonnet-4-5"},
            "middleware": [{"name": "frontend-image-injection", "toolName": "snap"}],
        },
    )
    _, image = build(eff, tmp_path)
    assert isinstance(image, FrontendImageInjectionMiddleware)
    assert image.provider == "anthropic" and image.tool_name == "snap"
    (_, demo) = build(effective(tmp_path, {"middleware": ["frontend-image-injection"]}), tmp_path)
    assert isinstance(demo, FrontendImageInjectionMiddleware)
    assert demo.provider == "fake" and demo.tool_name == "capture_image"
