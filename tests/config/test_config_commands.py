"""Per-command resolution: what each command actually runs with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config import ConfigError, GthConfig, load_config

# The "Complete Example" of Gaunt Sloth's tools configuration reference.
COMPLETE_EXAMPLE = """{
  "llm": {
    "type": "anthropic",
    "model": "claude-sonnet-4-5"
  },
  "customTools": {
    "deploy_staging": {
      "command": "npm run deploy:staging",
      "description": "Deploy to staging environment"
    },
    "run_migration": {
      "command": "npm run migrate -- ${name}",
      "description": "Run a database migration",
      "parameters": {
        "name": {
          "description": "Migration name"
        }
      }
    }
  },
  "commands": {
    "pr": {
      "customTools": {
        "validate_pr": {
          "command": "npm run validate:pr",
          "description": "Run PR validation checks"
        }
      }
    },
    "review": {
      "customTools": false
    },
    "code": {
      "filesystem": "all",
      "builtInTools": {
        "gth_checklist": true,
        "run_tests": { "command": "npm test" },
        "run_lint": { "command": "npm run lint-n-fix" }
      }
    }
  }
}"""


def load(tmp_path: Path, data: dict[str, Any]) -> GthConfig:
    file = tmp_path / ".gsloth.config.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    return load_config(file)


def shell(pattern: str) -> dict[str, str]:
    return {"type": "shell", "matcher": "glob", "pattern": pattern}


def test_notebook_defaults() -> None:
    notebook = GthConfig().for_command("notebook")

    assert notebook.filesystem == "read"
    assert list(notebook.built_in_tools) == [
        "gth_checklist",
        "gth_grep",
        "show_a2ui_surface",
        "list_variables",
        "describe_variable",
        "run_python",
    ]
    api = GthConfig().for_command("api")
    assert not {"list_variables", "describe_variable", "run_python"} & set(api.built_in_tools)
    assert notebook.approvals.mode == "assisted"
    assert notebook.recursion_limit == 1000
    assert notebook.port == 3000
    assert notebook.allowed_tools is None
    assert notebook.custom_tools == {}
    assert notebook.middleware == []


def test_api_defaults() -> None:
    api = GthConfig().for_command("api")

    assert api.filesystem == "read"
    assert list(api.built_in_tools) == ["gth_checklist", "gth_grep"]
    assert api.port == 3000
    assert api.max_body_bytes == 5 * 1024 * 1024
    assert api.cors.model_dump(by_alias=True) == {
        "allowOrigin": "http://localhost:3000",
        "allowMethods": "POST, GET, OPTIONS",
        "allowHeaders": "Content-Type, Accept",
    }


def test_filesystem_per_command(tmp_path: Path) -> None:
    config = load(tmp_path, {"filesystem": ["read", "write_file"]})

    assert config.for_command("code").filesystem == "all"
    assert config.for_command("exec").filesystem == "all"
    assert config.for_command("chat").filesystem == "read"  # the command default wins
    assert config.for_command("review").filesystem == ["read", "write_file"]

    config = load(tmp_path, {"commands": {"notebook": {"filesystem": "none"}}})
    assert config.for_command("notebook").filesystem == "none"
    assert GthConfig().for_command("review").filesystem == "none"


def test_built_in_tools_array_replaces_the_default_set(tmp_path: Path) -> None:
    config = load(tmp_path, {"builtInTools": ["gth_checklist", "gth_web_fetch"]})

    assert config.for_command("notebook").built_in_tools == {
        "gth_checklist": {},
        "gth_web_fetch": {},
    }


def test_built_in_tools_object_enables_disables_and_configures(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "builtInTools": {
                "gth_checklist": True,
                "gth_web_fetch": False,
                "gth_grep": {"fileSet": "all"},
                "run_tests": {"command": "npm test", "enabled": False},
                "run_shell_command": {"timeout": 300000, "judge": {"enabled": True}},
            }
        },
    )

    assert config.for_command("ask").built_in_tools == {
        "gth_checklist": {},
        "gth_grep": {"fileSet": "all"},
        "run_shell_command": {"timeout": 300000, "judge": {"enabled": True}},
    }


def test_disabling_one_tool_drops_the_defaults_too(tmp_path: Path) -> None:
    config = load(tmp_path, {"builtInTools": {"gth_grep": False}})

    assert config.for_command("api").built_in_tools == {}


def test_command_built_in_tools_replace_the_root(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "builtInTools": {"gth_checklist": True, "run_tests": {"command": "npm test"}},
            "commands": {"code": {"builtInTools": {"gth_checklist": True}}},
        },
    )

    assert config.for_command("ask").built_in_tools == {
        "gth_checklist": {},
        "run_tests": {"command": "npm test"},
    }
    # Nothing from the root carries over; the shell is on in code unless turned off.
    assert config.for_command("code").built_in_tools == {
        "gth_checklist": {},
        "run_shell_command": {},
    }

    config = load(tmp_path, {"commands": {"code": {"builtInTools": {"run_shell_command": False}}}})
    assert config.for_command("code").built_in_tools == {}


def test_custom_and_allowed_tools_per_command(tmp_path: Path) -> None:
    deploy = {"command": "npm run deploy", "description": "Deploy"}
    config = load(
        tmp_path,
        {
            "customTools": {"deploy": deploy},
            "allowedTools": ["deploy", "gth_*"],
            "commands": {
                "review": {"customTools": False, "allowedTools": []},
                "pr": {"customTools": {"lint": {"command": "npm run lint", "description": "L"}}},
            },
        },
    )

    assert list(config.for_command("notebook").custom_tools) == ["deploy"]
    assert config.for_command("notebook").allowed_tools == ["deploy", "gth_*"]
    assert config.for_command("review").custom_tools == {}
    assert config.for_command("review").allowed_tools == []  # no tools at all, not "no filter"
    assert list(config.for_command("pr").custom_tools) == ["lint"]


def test_command_approvals_replace_modes_and_add_prohibitions(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "approvals": {
                "mode": "auto",
                "rater": "safety",
                "allow": [shell("npm test*")],
                "deny": [shell("git push --force*")],
            },
            "commands": {
                "notebook": {"approvals": {"allow": [shell("pytest*")], "deny": [shell("rm *")]}},
                "api": {"approvals": "manual"},
            },
        },
    )

    notebook = config.for_command("notebook").approvals
    assert (notebook.mode, notebook.rater) == ("auto", "safety")
    assert [e.pattern for e in notebook.allow or []] == ["pytest*"]
    assert [e.pattern for e in notebook.deny] == ["git push --force*", "rm *"]

    api = config.for_command("api").approvals
    assert api.mode == "manual"
    assert [e.pattern for e in api.allow or []] == ["npm test*"]
    assert [e.pattern for e in api.deny] == ["git push --force*"]


def test_middleware_is_normalised_and_overridable(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "middleware": [
                "anthropic-prompt-caching",
                {"name": "summarization", "messagesToKeep": 5},
            ],
            "commands": {"notebook": {"middleware": ["frontend-image-injection"]}},
        },
    )

    assert config.for_command("chat").middleware == [
        {"name": "anthropic-prompt-caching"},
        {"name": "summarization", "messagesToKeep": 5},
    ]
    assert config.for_command("notebook").middleware == [{"name": "frontend-image-injection"}]


def test_api_server_settings(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {"commands": {"api": {"port": 8123, "cors": {"allowOrigin": "*"}, "maxBodyBytes": 1000}}},
    )

    api = config.for_command("api")
    assert (api.port, api.cors.allow_origin, api.max_body_bytes) == (8123, "*", 1000)
    assert api.cors.allow_methods == "POST, GET, OPTIONS"

    with pytest.raises(ConfigError, match=r"at commands\.api\.maxBodyBytes: .*greater than 0"):
        load(tmp_path, {"commands": {"api": {"maxBodyBytes": 0}}})


def test_complete_example_from_the_reference_loads(tmp_path: Path) -> None:
    file = tmp_path / ".gsloth.config.json"
    file.write_text(COMPLETE_EXAMPLE, encoding="utf-8")

    config = load_config(file)

    assert list(config.for_command("notebook").custom_tools) == ["deploy_staging", "run_migration"]
    migration = config.for_command("notebook").custom_tools["run_migration"]
    assert migration.parameters is not None
    assert migration.parameters["name"].description == "Migration name"
    assert list(config.for_command("pr").custom_tools) == ["validate_pr"]
    assert config.for_command("review").custom_tools == {}
    code = config.for_command("code")
    assert code.filesystem == "all"
    assert code.built_in_tools == {
        "gth_checklist": {},
        "run_tests": {"command": "npm test"},
        "run_lint": {"command": "npm run lint-n-fix"},
        "run_shell_command": {},
    }
