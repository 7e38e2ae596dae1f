"""resolve_tools: every source in order, filtered by allowedTools; the Complete Example."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool, tool

from gth_jupyter.agent import resolver
from gth_jupyter.agent.resolver import resolve_tools
from gth_jupyter.config import GthConfig, load_config
from gth_jupyter.tools import allowed, tool_name
from gth_jupyter.tools.fs._read import READ_TOOLS
from gth_jupyter.tools.fs._write import WRITE_TOOLS

# Seed 002, "Complete Example", verbatim.
COMPLETE_EXAMPLE: dict[str, Any] = {
    "llm": {"type": "anthropic", "model": "claude-sonnet-4-5"},
    "customTools": {
        "deploy_staging": {
            "command": "npm run deploy:staging",
            "description": "Deploy to staging environment",
        },
        "run_migration": {
            "command": "npm run migrate -- ${name}",
            "description": "Run a database migration",
            "parameters": {"name": {"description": "Migration name"}},
        },
    },
    "commands": {
        "pr": {
            "customTools": {
                "validate_pr": {
                    "command": "npm run validate:pr",
                    "description": "Run PR validation checks",
                }
            }
        },
        "review": {"customTools": False},
        "code": {
            "filesystem": "all",
            "builtInTools": {
                "gth_checklist": True,
                "run_tests": {"command": "npm test"},
                "run_lint": {"command": "npm run lint-n-fix"},
            },
        },
    },
}


def names(tools: list[Any]) -> list[str | None]:
    return [tool_name(t) for t in tools]


def config(tmp_path: Path, data: dict[str, Any]) -> GthConfig:
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(data))
    (tmp_path / "home").mkdir(exist_ok=True)
    return load_config(cwd=tmp_path, home=tmp_path / "home")


def test_the_complete_example_gives_the_tools_the_page_promises(tmp_path: Path) -> None:
    cfg = config(tmp_path, COMPLETE_EXAMPLE)
    custom = ["deploy_staging", "run_migration"]
    assert names(resolve_tools(cfg.for_command("notebook"), cwd=tmp_path)) == [
        *READ_TOOLS,
        "gth_checklist",
        "gth_grep",
        "show_a2ui_surface",
        "list_variables",
        "describe_variable",
        "run_python",
        *custom,
    ]
    assert names(resolve_tools(cfg.for_command("api"), cwd=tmp_path)) == [
        *READ_TOOLS,
        "gth_checklist",
        "gth_grep",
        *custom,
    ]
    assert names(resolve_tools(cfg.for_command("pr"), cwd=tmp_path)) == [
        "gth_checklist",
        "gth_grep",
        "validate_pr",
    ]
    assert names(resolve_tools(cfg.for_command("review"), cwd=tmp_path)) == [
        "gth_checklist",
        "gth_grep",
    ]
    # code: the registry replaces the defaults (no gth_grep); the shell is on by default there.
    assert names(resolve_tools(cfg.for_command("code"), cwd=tmp_path)) == [
        *READ_TOOLS,
        *WRITE_TOOLS,
        "gth_checklist",
        "run_tests",
        "run_lint",
        "run_shell_command",
        *custom,
    ]


def test_notebook_defaults_and_shell_only_when_enabled(tmp_path: Path) -> None:
    default = names(resolve_tools(GthConfig().for_command("notebook"), cwd=tmp_path))
    assert "run_shell_command" not in default and "write_file" not in default
    enabled = config(
        tmp_path,
        {"commands": {"notebook": {"builtInTools": ["gth_checklist", "run_shell_command"]}}},
    )
    assert names(resolve_tools(enabled.for_command("notebook"), cwd=tmp_path))[-2:] == [
        "gth_checklist",
        "run_shell_command",
    ]


def test_allowed_tools_applies_to_every_source_with_globs(tmp_path: Path) -> None:
    @tool
    def from_python(x: int) -> int:
        """A Python-config tool."""
        return x

    data = {
        "allowedTools": ["gth_*", "read_file", "deploy_staging", "from_python", "web_search"],
        "customTools": COMPLETE_EXAMPLE["customTools"],
        "tools": [
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
            {"type": "web_search_preview"},
            {"type": "code_execution", "name": "code_execution"},
        ],
    }
    tools = resolve_tools(
        config(tmp_path, data).for_command("notebook"), cwd=tmp_path, extra=[from_python]
    )
    assert names(tools) == [
        "read_file",
        "gth_checklist",
        "gth_grep",
        "deploy_staging",
        "web_search",
        None,  # a server tool without a name is always kept
        "from_python",
    ]
    assert tools[4] == {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}


def test_an_empty_allow_list_builds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise AssertionError("nothing may be built")

    for source in ("filesystem_tools", "built_in_tools", "custom_tools"):
        monkeypatch.setattr(resolver, source, explode)
    cfg = config(tmp_path, {"commands": {"review": {"allowedTools": []}}})
    assert resolve_tools(cfg.for_command("review"), cwd=tmp_path) == []


def test_unknown_names_are_skipped_and_names_are_never_taken_twice(tmp_path: Path) -> None:
    @tool
    def read_file(path: str) -> str:
        """An impostor."""
        return "unconfined"

    with pytest.warns(UserWarning, match="Unknown built-in tool: no_such_tool"):
        cfg = config(tmp_path, {"builtInTools": ["gth_checklist", "no_such_tool"]})
    tools = resolve_tools(cfg.for_command("notebook"), cwd=tmp_path, extra=[read_file])
    assert names(tools) == [*READ_TOOLS, "gth_checklist"]
    first = next(t for t in tools if isinstance(t, BaseTool) and t.name == "read_file")
    assert first is not read_file


def test_the_allow_filter_itself() -> None:
    tools: list[Any] = [{"name": "mcp__jira__get"}, {"name": "mcp__git__log"}, {"type": "x"}]
    assert names(allowed(tools, ["mcp__jira__*"])) == ["mcp__jira__get", None]
    assert allowed(tools, None) == tools
    assert names(allowed(tools, ["mcp"])) == [None]
