"""What the schema accepts and rejects, seen through load_config as a user sees it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config import ConfigError, GthConfig, load_config


def load(tmp_path: Path, data: dict[str, Any]) -> GthConfig:
    file = tmp_path / ".gsloth.config.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    return load_config(file)


def load_error(tmp_path: Path, data: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, data)
    return caught.value


def deny(**entry: Any) -> dict[str, Any]:
    return {"approvals": {"deny": [entry]}}


def test_camel_case_keys_and_snake_case_attributes(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "llm": {"type": "openai", "apiKeyEnvironmentVariable": "MY_KEY", "temperature": 0.2},
            "allowedTools": ["gth_*"],
            "recursionLimit": 50,
            "commands": {"api": {"maxBodyBytes": 1024}},
        },
    )

    assert config.llm is not None
    assert config.llm.api_key_environment_variable == "MY_KEY"
    assert config.allowed_tools == ["gth_*"]
    assert config.recursion_limit == 50
    dumped = config.model_dump(by_alias=True, exclude_none=True)
    assert dumped["llm"] == {
        "type": "openai",
        "apiKeyEnvironmentVariable": "MY_KEY",
        "temperature": 0.2,
    }
    assert dumped["commands"]["api"]["maxBodyBytes"] == 1024


def test_fake_model_options_are_carried_unvalidated(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {"llm": {"type": "fake", "responses": ["Hello"], "tokenDelayMs": 10, "recordPath": "r"}},
    )

    assert config.llm is not None
    assert config.llm.model_extra == {"responses": ["Hello"], "tokenDelayMs": 10, "recordPath": "r"}


def test_llm_without_type_is_rejected(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"llm": {"model": "gpt-4o"}})

    assert error.key_path == "llm.type"
    assert error.detail == "Field required"


def test_regexp_pattern_must_compile(tmp_path: Path) -> None:
    error = load_error(tmp_path, deny(type="shell", matcher="regexp", pattern="rm (-rf"))

    assert error.key_path == "approvals.deny[0].pattern"
    assert "regexp pattern 'rm (-rf' does not compile" in str(error)


def test_regexp_pattern_is_at_most_200_characters(tmp_path: Path) -> None:
    assert load(tmp_path, deny(type="shell", matcher="regexp", pattern="a" * 200)).approvals
    long = "a" * 201

    error = load_error(tmp_path, deny(type="shell", matcher="regexp", pattern=long))

    assert error.key_path == "approvals.deny[0].pattern"
    assert f"regexp pattern '{long}' is longer than 200 characters" in str(error)


def test_hint_pattern_is_a_non_empty_object_of_known_hints(tmp_path: Path) -> None:
    hint = {"type": "mcpTool", "server": "jira", "matcher": "hint"}
    config = load(tmp_path, deny(**hint, pattern={"destructiveHint": True}))
    assert config.approvals is not None
    assert config.approvals.deny[0].pattern == {"destructiveHint": True}

    assert load_error(tmp_path, deny(**hint, pattern={})).key_path == "approvals.deny[0].pattern"
    error = load_error(tmp_path, deny(**hint, pattern={"scaryHint": True}))
    assert error.key_path == "approvals.deny[0].pattern.scaryHint"


def test_entry_types_are_checked(tmp_path: Path) -> None:
    error = load_error(tmp_path, deny(type="mcpTool", matcher="exact", pattern="getIssue"))
    assert error.key_path == "approvals.deny[0]"
    assert "needs 'server'" in error.detail

    error = load_error(tmp_path, deny(type="shell", matcher="hint", pattern={"readOnlyHint": 1}))
    assert "a shell entry takes an exact, glob or regexp matcher" in error.detail

    error = load_error(tmp_path, deny(type="file", matcher="exact", pattern="x"))
    assert error.key_path == "approvals.deny[0].type"


def test_approvals_mode_name_or_object(tmp_path: Path) -> None:
    config = load(tmp_path, {"approvals": "manual"})
    assert config.approvals is not None and config.approvals.mode == "manual"

    error = load_error(tmp_path, {"approvals": "yolo"})
    assert error.key_path == "approvals"
    assert "'manual', 'write', 'assisted', 'auto' or 'bypass'" in error.detail


def test_custom_tool_fields_are_validated(tmp_path: Path) -> None:
    tool = {"command": "npm run deploy", "description": "Deploy"}
    error = load_error(tmp_path, {"customTools": {"deploy": {**tool, "timeout": 0}}})
    assert error.key_path == "customTools.deploy.timeout"
    assert error.detail == "Input should be greater than 0"

    error = load_error(tmp_path, {"customTools": {"deploy": {"command": "npm run deploy"}}})
    assert error.key_path == "customTools.deploy.description"

    params = {"device": {"description": "USB device", "allow": ["absolute-paths", "sudo"]}}
    error = load_error(tmp_path, {"customTools": {"flash": {**tool, "parameters": params}}})
    assert error.key_path == "customTools.flash.parameters.device.allow[1]"


def test_built_in_tool_settings_are_validated(tmp_path: Path) -> None:
    error = load_error(tmp_path, {"builtInTools": {"gth_grep": {"fileSet": "everything"}}})
    assert error.key_path == "builtInTools.gth_grep.fileSet"
    assert error.detail == "Input should be 'gitignore' or 'all'"

    error = load_error(tmp_path, {"builtInTools": "gth_grep"})
    assert error.key_path == "builtInTools"
    assert error.detail == "Input should be a valid list; Input should be a valid dictionary"


def test_filesystem_and_middleware_shapes(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "filesystem": ["read", "write_file"],
            "middleware": ["summarization", {"name": "anthropic-prompt-caching", "ttl": "1h"}],
        },
    )
    assert config.filesystem == ["read", "write_file"]

    assert load_error(tmp_path, {"filesystem": "write"}).key_path == "filesystem"
    assert load_error(tmp_path, {"middleware": [{"ttl": "5m"}]}).key_path == "middleware[0].name"
