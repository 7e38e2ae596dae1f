"""Finding, parsing and layering config files, and the errors and warnings a user sees."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config import ConfigError, GthConfigWarning, find_config_file, load_config

CONFIG = ".gsloth.config.json"


def write(path: Path, data: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def test_jsonc_comments_and_trailing_commas(project: Path, home: Path) -> None:
    write(
        project / ".gsloth.config.jsonc",
        """{
          // the model
          "llm": {"type": "anthropic", "model": "claude-sonnet-4-5",},
          /* a block comment
             over two lines */
          "builtInTools": ["gth_checklist", "gth_web_fetch",],
          "commands": {"api": {"cors": {"allowOrigin": "http://localhost:8888"}}}, // trailing
        }""",
    )

    config = load_config(cwd=project, home=home)

    assert config.llm is not None and config.llm.model == "claude-sonnet-4-5"
    assert config.built_in_tools == ["gth_checklist", "gth_web_fetch"]
    # "//" inside a string is not a comment.
    assert config.for_command("api").cors.allow_origin == "http://localhost:8888"


def test_surrogate_pair_escapes_decode_to_one_character(project: Path, home: Path) -> None:
    write(project / CONFIG, '{"systemPrompt": "You are a sloth \\ud83e\\udda5"}')

    assert load_config(cwd=project, home=home).system_prompt == "You are a sloth \U0001f9a5"


def test_lookup_walks_up_from_a_nested_directory(project: Path, home: Path) -> None:
    file = write(project / CONFIG, {"llm": {"type": "ollama"}})
    nested = project / "notebooks" / "week1"
    nested.mkdir(parents=True)

    config = load_config(cwd=nested, home=home)

    assert config.llm is not None and config.llm.type == "ollama"
    assert config.sources == [file]


def test_nearest_directory_wins(project: Path, home: Path) -> None:
    write(project / CONFIG, {"llm": {"type": "anthropic"}})
    inner = write(project / "sub" / CONFIG, {"llm": {"type": "openai"}})

    assert find_config_file(project / "sub") == inner


def test_settings_folder_and_json_precedence(project: Path) -> None:
    write(project / ".gsloth.config.jsonc", {})
    plain = write(project / CONFIG, {})
    assert find_config_file(project) == plain

    settings = write(project / ".gsloth" / ".gsloth-settings" / CONFIG, {})
    assert find_config_file(project) == settings


def test_global_config_is_the_base_the_project_merges_over(project: Path, home: Path) -> None:
    deny_push = {"type": "shell", "matcher": "glob", "pattern": "git push*"}
    deny_publish = {"type": "shell", "matcher": "glob", "pattern": "npm publish*"}
    escalate_rm = {"type": "shell", "matcher": "glob", "pattern": "rm *"}
    global_file = write(
        home / ".gsloth" / CONFIG,
        {
            "llm": {"type": "anthropic", "model": "claude-haiku-4-5", "temperature": 0},
            "allowedTools": ["gth_grep", "read_file"],
            "approvals": {"mode": "auto", "deny": [deny_push], "escalate": [escalate_rm]},
        },
    )
    project_file = write(
        project / CONFIG,
        {
            "llm": {"model": "claude-sonnet-4-5"},
            "allowedTools": ["gth_checklist"],
            "approvals": {"deny": [deny_publish, deny_push]},
        },
    )

    config = load_config(cwd=project, home=home)

    assert config.sources == [global_file, project_file]
    assert config.llm is not None
    assert (config.llm.type, config.llm.model) == ("anthropic", "claude-sonnet-4-5")
    assert config.llm.model_extra == {"temperature": 0}
    assert config.allowed_tools == ["gth_checklist"]  # arrays replace
    assert config.approvals is not None and config.approvals.mode == "auto"
    patterns = [entry.pattern for entry in config.approvals.deny]
    assert patterns == ["git push*", "npm publish*"]  # deny concatenates, without duplicates
    assert [entry.pattern for entry in config.approvals.escalate] == ["rm *"]


def test_project_approvals_mode_name_keeps_global_deny(project: Path, home: Path) -> None:
    deny = {"type": "shell", "matcher": "exact", "pattern": "make deploy"}
    write(home / ".gsloth" / ".gsloth.config.jsonc", {"approvals": {"deny": [deny]}})
    write(project / CONFIG, {"approvals": "bypass"})

    approvals = load_config(cwd=project, home=home).for_command("chat").approvals

    assert approvals.mode == "bypass"
    assert [entry.pattern for entry in approvals.deny] == ["make deploy"]


def test_global_config_alone(project: Path, home: Path) -> None:
    write(home / ".gsloth" / CONFIG, {"llm": {"type": "groq"}})

    config = load_config(cwd=project, home=home)

    assert config.llm is not None and config.llm.type == "groq"


def test_no_config_means_no_llm(project: Path, home: Path) -> None:
    config = load_config(cwd=project, home=home)

    assert config.llm is None
    assert config.sources == []
    assert config.for_command("notebook").llm is None


def test_explicit_path_loads_that_file_only(project: Path, home: Path) -> None:
    write(home / ".gsloth" / CONFIG, {"llm": {"type": "anthropic"}, "systemPrompt": "global"})
    write(project / CONFIG, {"llm": {"type": "openai"}})
    custom = write(project / "configs" / "demo.json", {"llm": {"type": "fake", "responses": []}})

    config = load_config("configs/demo.json", cwd=project, home=home)

    assert config.llm is not None and config.llm.type == "fake"
    assert config.system_prompt is None
    assert config.sources == [custom]


def test_missing_explicit_file_is_an_error(project: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(project / "nope.json")

    assert caught.value.code == "config_not_found"
    assert caught.value.file == project / "nope.json"
    assert str(caught.value) == f"Configuration file not found: {project / 'nope.json'}"


def test_invalid_json_names_file_line_and_column(project: Path, home: Path) -> None:
    file = write(project / CONFIG, '{\n  "llm": {"type": "anthropic"},\n  "filesystem": ,\n}')

    with pytest.raises(ConfigError) as caught:
        load_config(cwd=project, home=home)

    error = caught.value
    assert (error.code, error.file, error.line, error.column) == (
        "config_invalid_json",
        file,
        3,
        17,
    )
    assert str(error).startswith(f"Invalid JSON in {file} at line 3, column 17: Expecting value")


def test_unterminated_comment_and_non_object_are_errors(project: Path, home: Path) -> None:
    file = write(project / CONFIG, '{"llm": {"type": "anthropic"}}\n/* unfinished')
    with pytest.raises(ConfigError, match=r"at line 2, column 1: Unterminated /\* comment"):
        load_config(file)

    write(file, '["not", "an", "object"]')
    with pytest.raises(ConfigError, match="the top level must be a JSON object"):
        load_config(file)


def test_invalid_value_names_file_and_key_path(project: Path, home: Path) -> None:
    file = write(project / CONFIG, {"commands": {"api": {"port": 70000}}})

    with pytest.raises(ConfigError) as caught:
        load_config(cwd=project, home=home)

    assert caught.value.key_path == "commands.api.port"
    assert str(caught.value) == (
        f"Invalid configuration in {file} at commands.api.port: "
        "Input should be less than or equal to 65535"
    )


def test_invalid_value_in_the_global_file_names_the_global_file(project: Path, home: Path) -> None:
    global_file = write(home / ".gsloth" / CONFIG, {"customTools": {"deploy": {"command": 1}}})
    write(project / CONFIG, {"llm": {"type": "anthropic"}})

    with pytest.raises(ConfigError) as caught:
        load_config(cwd=project, home=home)

    assert caught.value.file == global_file
    assert caught.value.key_path == "customTools.deploy.command"


def test_error_reports_how_many_more_problems_there_are(project: Path) -> None:
    file = write(project / CONFIG, {"llm": {"model": "x"}, "recursionLimit": 0, "filesystem": 3})

    with pytest.raises(ConfigError) as caught:
        load_config(file)

    assert caught.value.key_path == "llm.type"
    assert str(caught.value).endswith("Field required (and 2 more errors)")


def test_unknown_keys_warn_and_loading_continues(
    project: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    file = write(
        project / CONFIG,
        {
            "llm": {"type": "fake", "responses": ["hi"], "tokenDelayMs": 5},
            "systemPromt": "typo",
            "commands": {"api": {"prot": 8080, "cors": {"allowOrigins": "*"}}},
            "middleware": [{"name": "summarization", "messagesToKeep": 5}],
            "builtInTools": {"gth_grep": {"fileSet": "all", "extraFlag": True}},
            "customTools": {"t": {"command": "x", "description": "d", "shell": "bash"}},
        },
    )

    with caplog.at_level(logging.WARNING, logger="gth_jupyter.config"):
        with pytest.warns(GthConfigWarning) as record:
            config = load_config(cwd=project, home=home)

    expected = {
        f"Unknown configuration key 'systemPromt' in {file}",
        f"Unknown configuration key 'commands.api.prot' in {file}",
        f"Unknown configuration key 'commands.api.cors.allowOrigins' in {file}",
    }
    assert {str(warning.message) for warning in record} == expected
    assert set(caplog.messages) == expected
    assert config.for_command("api").port == 3000


def test_unknown_key_is_attributed_to_the_file_it_is_in(project: Path, home: Path) -> None:
    global_file = write(home / ".gsloth" / CONFIG, {"approvals": {"mode": "auto", "mcp": {}}})
    write(project / CONFIG, {"approvals": {"mode": "write"}})

    with pytest.warns(GthConfigWarning) as record:
        load_config(cwd=project, home=home)

    assert [str(w.message) for w in record] == [
        f"Unknown configuration key 'approvals.mcp' in {global_file}"
    ]


def test_unknown_built_in_tool_warns_and_is_kept(project: Path, home: Path) -> None:
    file = write(project / CONFIG, {"commands": {"notebook": {"builtInTools": ["gth_teleport"]}}})

    with pytest.warns(GthConfigWarning, match="Unknown built-in tool: gth_teleport") as record:
        config = load_config(cwd=project, home=home)

    assert str(record[0].message) == f"Unknown built-in tool: gth_teleport (in {file})"
    assert config.for_command("notebook").built_in_tools == {"gth_teleport": {}}
