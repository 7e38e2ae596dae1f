"""Custom tools and the dev-command tools with real subprocesses: shapes, messages, validation."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter.config.schema import CustomToolConfig
from gth_jupyter.tools.custom import CustomCommandTool, make_custom_tool, validation_waived
from gth_jupyter.tools.dev import make_dev_tool
from gth_jupyter.tools.validation import ParameterError, build_command, validate_value

from .conftest import output_text, run_call

INJECTION = (
    "Shell injection attempts are not allowed in parameter 'p'.Disallowed symbols pipe, "
    "ampersand, semicolon, backtick, single quote, dollar sign, command substitution, newline, "
    "carriage return, redirection"
)


def custom(cwd: Path, **spec: Any) -> CustomCommandTool:
    tool = make_custom_tool("tool", CustomToolConfig.model_validate(spec), cwd)
    assert isinstance(tool, CustomCommandTool)
    return tool


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("/etc/passwd", "Absolute paths are not allowed for parameter 'p'"),
        ("a/../b", "Directory traversal attempts are not allowed in parameter 'p'"),
        ("..", "Directory traversal attempts are not allowed in parameter 'p'"),
        ("a|b", INJECTION),
        ("a; rm x", INJECTION),
        ("$(id)", INJECTION),
        ("`id`", INJECTION),
        ("it's", INJECTION),
        ("a\nb", INJECTION),
        ("a > out", INJECTION),
        ("a\0b", "Null bytes are not allowed in parameter 'p'"),
    ],
)
def test_each_check_has_gaunt_sloths_message(value: str, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        validate_value(value, "p")
    assert str(caught.value) == message


def test_allow_skips_only_the_named_checks() -> None:
    assert validate_value("/dev/ttyUSB0", "p", ["absolute-paths"]) == "/dev/ttyUSB0"
    assert validate_value("a//b/./c", "p") == "a/b/c"
    assert validate_value("a;b", "p", ["shell-injection"]) == "a;b"
    with pytest.raises(ParameterError, match="Directory traversal"):
        validate_value("/dev/../etc", "p", ["absolute-paths"])
    with pytest.raises(
        ParameterError, match=r"Shell injection attempts are not allowed in parameter 'p'$"
    ):
        validate_value("a|b", "p", dev_tool=True)
    assert validate_value("it's", "p", dev_tool=True) == "it's"


def test_interpolation_or_appending_in_definition_order() -> None:
    order = ["name", "tag"]
    assert build_command("build ${name}:${tag} ${name}", {"tag": "v1", "name": "img"}, order) == (
        "build img:v1 img"
    )
    assert build_command("deploy", {"tag": "v1", "name": "img"}, order) == "deploy img v1"
    assert build_command("deploy", {}, order) == "deploy"


async def test_a_custom_tool_runs_its_command_and_reports_like_gaunt_sloth(tmp_path: Path) -> None:
    tool = custom(
        tmp_path,
        command="echo migrating ${name}",
        description="Run a migration",
        parameters={"name": {"description": "Migration name"}},
    )
    assert (
        tool.description == "Run a migration\nThe configured command is [echo migrating ${name}]."
    )
    assert tool.metadata == {"gth_kind": "exec", "command": "echo migrating ${name}"}
    assert tool.tool_call_schema.model_json_schema()["required"] == ["name"]
    result = await run_call([tool], "tool", {"name": "add_users"})
    assert result.message.content == (
        "Executing 'echo migrating add_users'...\n\n<COMMAND_OUTPUT>\nmigrating add_users\n"
        "</COMMAND_OUTPUT>\n\n\nCommand 'echo migrating add_users' completed successfully"
    )
    assert output_text(result.events) == "migrating add_users\n"
    failing = custom(tmp_path, command="exit 4", description="d")
    assert (await failing.ainvoke({})).endswith("Command 'exit 4' exited with code 4")


async def test_custom_tool_timeout_is_seconds_then_sigkill(tmp_path: Path) -> None:
    tool = custom(tmp_path, command="trap '' TERM; sleep 30", description="d", timeout=0.3)
    started = time.monotonic()
    out = await tool.ainvoke({})
    assert 2.5 < time.monotonic() - started < 10
    assert out.endswith("Command 'trap '' TERM; sleep 30' timed out after 0.3 seconds")


async def test_a_failing_value_is_an_error_unless_waived(tmp_path: Path) -> None:
    tool = custom(
        tmp_path,
        command="touch",
        description="d",
        parameters={"file": {"description": "f"}},
    )
    assert tool.check({"file": "ok.txt"}) == ("touch ok.txt", None)
    command, error = tool.check({"file": "x; touch canary"})
    assert command == "touch 'x; touch canary'" and error is not None
    result = await run_call([tool], "tool", {"file": "x; touch canary"})
    assert result.message.status == "error"
    assert result.message.content.startswith(
        "Execution of 'tool' was not allowed. Validation error: Shell injection attempts"
    )
    assert not (tmp_path / "canary").exists()
    with validation_waived("call-9"):
        runtime = type("R", (), {"tool_call_id": "call-9", "stream_writer": None})()
        await tool.run_command({"file": "a b"}, runtime)  # spaces pass; waived or not
        await tool.run_command({"file": "x; touch canary"}, runtime)
    # Waived means the value runs unvalidated, still as one argument: a file of that name.
    assert (tmp_path / "x; touch canary").exists() and (tmp_path / "a b").exists()
    assert not (tmp_path / "canary").exists()


async def test_dev_tools_run_their_configured_command(tmp_path: Path) -> None:
    tests = make_dev_tool("run_tests", {"command": "echo tested"}, {}, tmp_path)
    assert tests is not None and tests.metadata == {"gth_kind": "exec", "command": "echo tested"}
    result = await run_call([tests], "run_tests", {})
    assert result.message.content.endswith("Command 'echo tested' completed successfully")
    lint = make_dev_tool("run_lint", {"command": "exit 1"}, {}, tmp_path)
    assert lint is not None
    assert (await run_call([lint], "run_lint", {})).message.status == "error"
    assert make_dev_tool("run_build", {}, {}, tmp_path) is None


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("echo pytest ${testPath} -q", "echo pytest tests/test_a.py -q"),
        ("echo pytest", "echo pytest tests/test_a.py"),
    ],
)
async def test_run_single_test_substitutes_or_appends(
    tmp_path: Path, template: str, expected: str
) -> None:
    tool = make_dev_tool("run_single_test", {"command": template}, {}, tmp_path)
    assert tool is not None
    result = await run_call([tool], "run_single_test", {"testPath": "tests//test_a.py"})
    assert result.message.content.startswith(f"Executing '{expected}'...")


@pytest.mark.parametrize(
    "path", ["../secret_test.py", "/abs/test.py", "t.py; touch canary", "$(touch canary)"]
)
async def test_run_single_test_refuses_unsafe_paths(tmp_path: Path, path: str) -> None:
    tool = make_dev_tool("run_single_test", {"command": "echo ${testPath}"}, {}, tmp_path)
    assert tool is not None
    result = await run_call([tool], "run_single_test", {"testPath": path})
    assert result.message.status == "error"
    assert "not allowed" in result.message.content
    assert not (tmp_path / "canary").exists()
