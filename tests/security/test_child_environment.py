"""Issue 8, item 5 (first half): commands started by tools see an allow-listed environment.

The review found ``MY_DB_PASSWORD``, ``DATABASE_URL``, ``OPENAI_KEY`` and
``ANTHROPIC_API_KEY_BACKUP`` in ``env`` run by the shell tool: the deny-list scrub only knew
names ending like a key. Each test starts real children through the real tool builders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from gth_jupyter.agent.resolver import resolve_tools as build_tools
from gth_jupyter.config import ConfigError
from tests.tools.conftest import run_call

from .conftest import command_output, load

SECRETS = {
    "MY_DB_PASSWORD": "hunter2-db",
    "DATABASE_URL": "postgres://u:hunter2-url@db/x",
    "OPENAI_KEY": "sk-hunter2-openai",
    "ANTHROPIC_API_KEY_BACKUP": "sk-ant-hunter2",
    "GITHUB_TOKEN": "ghp_hunter2",
    "JUPYTER_TOKEN": "jt-hunter2",
    "GTH_JUPYTER_TOKEN": "gth-hunter2-standalone",
}


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_MESSAGES", "C")
    monkeypatch.setenv("VIRTUAL_ENV", "/opt/venv-kept")
    return SECRETS


def tools_for(project: Path, config: dict[str, Any], command: str) -> dict[str, BaseTool]:
    effective = load(project, config).for_command(command)
    return {t.name: t for t in build_tools(effective, cwd=project) if isinstance(t, BaseTool)}


def environment(text: object) -> dict[str, str]:
    return dict(line.split("=", 1) for line in command_output(text).splitlines() if "=" in line)


ENV_TOOLS = {
    "builtInTools": {
        "run_shell_command": True,
        "run_tests": {"command": "env"},
        "run_single_test": {"command": "env; :"},  # the path goes to `:`
    },
    "customTools": {"show_env": {"command": "env", "description": "Print the environment"}},
}
CALLS = [
    ("run_shell_command", {"command": "env"}),
    ("run_tests", {}),
    ("run_single_test", {"testPath": "tests"}),
    ("show_env", {}),
]


@pytest.mark.parametrize(("name", "args"), CALLS)
async def test_no_secret_reaches_a_shell_dev_or_custom_command(
    tmp_path: Path, secrets: dict[str, str], name: str, args: dict[str, Any]
) -> None:
    tool = tools_for(tmp_path, ENV_TOOLS, "code")[name]
    result = await run_call([tool], name, args)
    assert "hunter2" not in result.message.content
    env = environment(result.message.content)
    assert env["LC_MESSAGES"] == "C" and env["VIRTUAL_ENV"] == "/opt/venv-kept"
    assert "PATH" in env and "HOME" in env


@pytest.mark.parametrize(("name", "args"), CALLS)
async def test_pass_env_at_the_root_and_per_command(
    tmp_path: Path, secrets: dict[str, str], name: str, args: dict[str, Any]
) -> None:
    config = {
        **ENV_TOOLS,
        "passEnv": ["DATABASE_URL"],
        "commands": {"notebook": {"passEnv": ["MY_*"]}},
    }
    code = environment(
        (await run_call([tools_for(tmp_path, config, "code")[name]], name, args)).message.content
    )
    assert code["DATABASE_URL"] == secrets["DATABASE_URL"] and "MY_DB_PASSWORD" not in code
    tool = tools_for(tmp_path, config, "notebook")[name]
    notebook = environment((await run_call([tool], name, args)).message.content)
    # The command's list replaces the root's.
    assert (
        notebook["MY_DB_PASSWORD"] == secrets["MY_DB_PASSWORD"] and "DATABASE_URL" not in notebook
    )


async def test_a_star_never_passes_the_host_tokens(tmp_path: Path, secrets: dict[str, str]) -> None:
    config = {**ENV_TOOLS, "passEnv": ["*"]}
    tool = tools_for(tmp_path, config, "code")["show_env"]
    env = environment((await run_call([tool], "show_env", {})).message.content)
    assert env["OPENAI_KEY"] == secrets["OPENAI_KEY"]  # the user asked for everything...
    assert "JUPYTER_TOKEN" not in env and "GTH_JUPYTER_TOKEN" not in env  # ...but the host's


async def test_the_standalone_token_never_passes_even_by_name(
    tmp_path: Path, secrets: dict[str, str]
) -> None:
    config = {**ENV_TOOLS, "passEnv": ["GTH_JUPYTER_TOKEN", "JUPYTER_TOKEN"]}
    tool = tools_for(tmp_path, config, "code")["show_env"]
    env = environment((await run_call([tool], "show_env", {})).message.content)
    assert "GTH_JUPYTER_TOKEN" not in env
    assert env["JUPYTER_TOKEN"] == secrets["JUPYTER_TOKEN"]  # named exactly: the user's choice


@pytest.mark.parametrize("entry", ["A-B", "$HOME", "X Y", ""])
def test_a_pass_env_entry_must_be_a_name_or_glob(tmp_path: Path, entry: str) -> None:
    with pytest.raises(ConfigError, match="passEnv"):
        load(tmp_path, {"passEnv": [entry]})


async def test_ripgrep_gets_no_secrets_and_no_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gth_grep's ripgrep is a child too: RIPGREP_CONFIG_PATH could add options to every search."""
    import shutil

    from gth_jupyter.tools.fs.workspace import Workspace
    from gth_jupyter.tools.grep.tool import make_grep_tool

    if shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    (tmp_path / "a.txt").write_text("needle\n")
    (tmp_path / "rgrc").write_text("--files-without-match\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(tmp_path / "rgrc"))
    tool = make_grep_tool(Workspace.at(tmp_path), {})
    out = await tool.ainvoke({"pattern": "needle"})
    assert "needle" in str(out)
