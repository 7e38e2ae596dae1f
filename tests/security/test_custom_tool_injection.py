"""Issue 8, item 1: a model's value reaches a custom tool's command as exactly one argument.

Each repro is the adversarial review's, against a real ``/bin/sh``: before the fix, values were
pasted unquoted, so spaces, a leading ``-``, ``~``, ``{}`` and globs all passed the four checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from gth_jupyter.agent.resolver import resolve_tools as build_tools
from gth_jupyter.config import ConfigError
from gth_jupyter.config.schema import CustomToolConfig
from gth_jupyter.tools.custom import CustomCommandTool, make_custom_tool
from gth_jupyter.tools.validation import ParameterError, validate_value
from tests.tools.conftest import run_call

from .conftest import command_output, load


def tool(cwd: Path, command: str, **params: dict[str, Any]) -> CustomCommandTool:
    spec = CustomToolConfig.model_validate(
        {
            "command": command,
            "description": "d",
            "parameters": {p: {"description": p, **extra} for p, extra in params.items()},
        }
    )
    made = make_custom_tool("t", spec, cwd)
    assert isinstance(made, CustomCommandTool)
    return made


async def test_find_exec_through_a_pattern_creates_nothing(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        {
            "customTools": {
                "finder": {
                    "command": "find . -name ${pattern}",
                    "description": "Find files by name",
                    "parameters": {"pattern": {"description": "A name pattern"}},
                }
            }
        },
    )
    tools = build_tools(config.for_command("notebook"), cwd=tmp_path)
    finder = next(t for t in tools if isinstance(t, BaseTool) and t.name == "finder")
    result = await run_call([finder], "finder", {"pattern": "zz -o -exec touch PWNED {} +"})
    assert not (tmp_path / "PWNED").exists()
    assert str(result.message.content).startswith(
        "Executing 'find . -name 'zz -o -exec touch PWNED {} +''..."
    )


async def test_a_second_path_after_a_space_is_refused(tmp_path: Path) -> None:
    cat = tool(tmp_path, "cat ${file}", file={})
    result = await run_call([cat], "t", {"file": "x /etc/passwd"})
    assert result.message.status == "error"
    assert "Absolute paths are not allowed for parameter 'file'" in result.message.content
    assert "root:" not in result.message.content


async def test_a_home_path_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export SECRET=bashrc-secret\n")
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    cat = tool(project, "cat ${file}", file={})
    result = await run_call([cat], "t", {"file": "~/.bashrc"})
    assert result.message.status == "error"
    assert "Absolute paths are not allowed for parameter 'file'" in result.message.content
    assert "bashrc-secret" not in result.message.content


@pytest.mark.parametrize(
    "value",
    [
        "/etc/passwd",
        "x /etc",
        "a\t/etc",
        "--file=/etc/passwd",
        "a:/etc",
        "a,/etc",
        "~",
        "~root",
        "x ~/.ssh",
        "k=~/.ssh",
        "\\\\server\\share",
    ],
)
def test_the_absolute_path_check_looks_at_the_whole_value(value: str) -> None:
    with pytest.raises(ParameterError, match=r"^Absolute paths are not allowed for parameter 'p'$"):
        validate_value(value, "p")
    assert validate_value(value, "p", ["absolute-paths", "option-injection"]) == value


@pytest.mark.parametrize("value", ["-exec", "--output", "./-rf", ".//-x", "-"])
def test_option_injection_is_refused_and_can_be_allowed(value: str) -> None:
    with pytest.raises(ParameterError) as caught:
        validate_value(value, "p")
    assert str(caught.value) == "Option injection attempts are not allowed in parameter 'p'"
    assert validate_value(value, "p", ["option-injection"]).lstrip("./") == value.lstrip("./")


async def test_option_injection_never_reaches_the_program(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("")
    finder = tool(tmp_path, "find . -name ${p}", p={})
    result = await run_call([finder], "t", {"p": "-exec"})
    assert result.message.status == "error"
    assert "Option injection attempts are not allowed in parameter 'p'" in result.message.content
    allowed = tool(tmp_path, "printf '[%s]' ${p}", p={"allow": ["option-injection"]})
    done = await run_call([allowed], "t", {"p": "-n"})
    assert command_output(done.message.content) == "[-n]"  # allowed, and still one argument


async def test_values_are_one_argument_each_and_templates_still_compose(tmp_path: Path) -> None:
    builder = tool(tmp_path, "printf '[%s]' -t ${image}:${tag} .", image={}, tag={})
    result = await run_call([builder], "t", {"image": "my app", "tag": "v1*"})
    assert command_output(result.message.content) == "[-t][my app:v1*][.]"
    appended = tool(tmp_path, "printf '[%s]'", a={}, b={})
    result = await run_call([appended], "t", {"a": "x y", "b": "{a,b}"})
    assert command_output(result.message.content) == "[x y][{a,b}]"


async def test_a_value_is_substituted_once_even_if_it_names_another_placeholder(
    tmp_path: Path,
) -> None:
    # `a` may hold `$` (shell-injection allowed); a second pass would have put b's quoted value
    # inside a's quotes, unquoting it again.
    both = tool(tmp_path, "printf '[%s]' ${a} ${b}", a={"allow": ["shell-injection"]}, b={})
    result = await run_call([both], "t", {"a": "${b}", "b": "x -o -exec touch PWNED {} +"})
    assert command_output(result.message.content) == "[${b}][x -o -exec touch PWNED {} +]"
    assert not (tmp_path / "PWNED").exists()


async def test_allowing_shell_injection_makes_the_symbols_literal(tmp_path: Path) -> None:
    echo = tool(tmp_path, "printf '[%s]' ${p}", p={"allow": ["shell-injection"]})
    result = await run_call([echo], "t", {"p": "a; touch PWNED `touch PWNED` $(touch PWNED)'"})
    assert (
        command_output(result.message.content) == "[a; touch PWNED `touch PWNED` $(touch PWNED)']"
    )
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize(
    "command",
    [
        "grep '${p}' .",
        'grep "${p}" .',
        "grep \\${p} .",
        "echo ${X:-${p}}",
        "echo $'${p}'",
        "cat <<EOF\n${p}\nEOF",
    ],
)
def test_a_placeholder_in_quotes_is_refused_when_the_config_loads(
    tmp_path: Path, command: str
) -> None:
    spec = {"command": command, "description": "d", "parameters": {"p": {"description": "p"}}}
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, {"commands": {"notebook": {"customTools": {"grepper": spec}}}})
    assert "custom tool 'grepper'" in str(caught.value)
    assert "${p}" in str(caught.value)
    with pytest.raises(ValueError, match="custom tool 'grepper'"):
        make_custom_tool("grepper", CustomToolConfig.model_validate(spec), tmp_path)


def test_bare_placeholders_and_quotes_elsewhere_load(tmp_path: Path) -> None:
    spec = {
        "command": "grep -e ${p} \"$HOME\" -- '*.py' <<< ${p}",
        "description": "d",
        "parameters": {"p": {"description": "p"}},
    }
    config = load(tmp_path, {"customTools": {"grepper": spec}})
    assert list(config.for_command("notebook").custom_tools) == ["grepper"]


def test_a_quoted_test_path_placeholder_is_refused_when_the_config_loads(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="run_single_test"):
        load(tmp_path, {"builtInTools": {"run_single_test": {"command": "pytest '${testPath}'"}}})
