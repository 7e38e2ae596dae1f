"""run_shell_command with real subprocesses: results, error status, live output, hardening."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from gth_jupyter.tools.process import OutputBuffer, child_env
from gth_jupyter.tools.shell import hardline, make_shell_tool

from .conftest import output_text, run_call


def read_and_remove(path: str) -> str:
    text = Path(path).read_text()
    os.unlink(path)
    return text


async def test_success_is_worded_like_gaunt_sloth_and_streams_live(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {})
    result = await run_call([tool], "run_shell_command", {"command": "echo one; echo two >&2"})
    assert result.message.status == "success"
    assert result.message.content == (
        "Executing 'echo one; echo two >&2'...\n\n<COMMAND_OUTPUT>\none\ntwo\n</COMMAND_OUTPUT>\n"
        "\n\nCommand 'echo one; echo two >&2' completed successfully"
    )
    notices = [e for e in result.events if e.get("isNotice")]
    assert notices[0]["chunk"] == "🔧 Executing run_shell_command: echo one; echo two >&2\n"
    assert output_text(result.events) == "one\ntwo\n"
    assert {e["id"] for e in result.events} == {"call-1"}
    assert {e["name"] for e in result.events} == {"run_shell_command"}


async def test_non_zero_exit_is_an_error_tool_message_in_the_checkpoint(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {})
    result = await run_call([tool], "run_shell_command", {"command": "echo oops; exit 3"})
    assert result.message.status == "error"
    assert result.message.content.endswith("Command 'echo oops; exit 3' exited with code 3")
    assert "<COMMAND_OUTPUT>\noops\n</COMMAND_OUTPUT>" in result.message.content


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {"timeout": 300})
    command = "sleep 30 & echo $! > child.pid; wait"
    started = time.monotonic()
    result = await run_call([tool], "run_shell_command", {"command": command})
    assert time.monotonic() - started < 10
    assert result.message.status == "error"
    assert result.message.content.endswith(
        f"Command '{command}' was killed after exceeding the 0s timeout. If it legitimately "
        "needs longer, increase the shell timeout in config."
    )
    child = int((tmp_path / "child.pid").read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the backgrounded child survived the timeout")


async def test_sigterm_is_followed_by_sigkill(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {"timeout": 200})
    command = "trap '' TERM; echo ready; sleep 30"
    started = time.monotonic()
    result = await run_call([tool], "run_shell_command", {"command": command})
    assert 2.5 < time.monotonic() - started < 10  # the 3 s grace, then SIGKILL
    assert result.message.status == "error"
    assert "ready" in result.message.content


async def test_stdin_is_empty_so_prompts_do_not_hang(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {"timeout": 20_000})
    started = time.monotonic()
    result = await run_call([tool], "run_shell_command", {"command": "read answer; cat; echo done"})
    assert time.monotonic() - started < 10
    assert "done" in result.message.content


async def test_only_allow_listed_and_passed_variables_reach_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before the allow-list, a deny-list kept GITHUB_TOKEN and anything not named like a key.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hush-1")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-hush-2")
    monkeypatch.setenv("JUPYTER_TOKEN", "jt-hush-3")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-hush-4")
    monkeypatch.setenv("PLAIN_SETTING", "hush-5")
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("NPM_CONFIG_CACHE", "/tmp/npm-passed")
    tool = make_shell_tool(tmp_path, {}, pass_env=["NPM_*"])
    result = await run_call([tool], "run_shell_command", {"command": "env"})
    assert "hush" not in result.message.content
    assert "LC_TIME=C" in result.message.content
    assert "NPM_CONFIG_CACHE=/tmp/npm-passed" in result.message.content
    assert f"PATH={os.environ['PATH']}" in result.message.content
    assert child_env(source={"AWS_SECRET_ACCESS_KEY": "x", "HOME": "/h"}) == {"HOME": "/h"}


async def test_long_output_keeps_head_and_tail_and_spills_the_rest(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {"maxOutputBytes": 1000})
    command = "seq 1 5000"
    result = await run_call([tool], "run_shell_command", {"command": command})
    body = result.message.content
    assert body.startswith("Executing 'seq 1 5000'...\n\n<COMMAND_OUTPUT>\n1\n2\n3\n")
    assert "4999\n5000\n</COMMAND_OUTPUT>" in body
    marker = body[body.index("... [") : body.index("] ...")]
    spill = marker.split("full output in ")[1]
    assert read_and_remove(spill) == "".join(f"{i}\n" for i in range(1, 5001))
    assert len(body.encode()) < 1300
    assert len(output_text(result.events)) == len("".join(f"{i}\n" for i in range(1, 5001)))


def test_output_buffer_keeps_everything_within_budget() -> None:
    buffer = OutputBuffer(10)
    buffer.append(b"0123456789")
    assert buffer.text() == "0123456789" and buffer.spill_path is None


@pytest.mark.parametrize(
    "command",
    ["rm -rf /", "rm -rf ~", "ls && sudo rm -fr /*", "mkfs.ext4 /dev/sda1", ":(){ :|:& };:"],
)
async def test_hardline_commands_never_run(tmp_path: Path, command: str) -> None:
    assert hardline(command) is not None
    tool = make_shell_tool(tmp_path, {})
    result = await run_call([tool], "run_shell_command", {"command": command})
    assert result.message.status == "error"
    assert result.message.content.startswith(f"Refusing to execute '{command}'")
    assert result.events == []


@pytest.mark.parametrize("command", ["rm -rf build", "git status", "echo shutdown"])
def test_ordinary_commands_are_not_hardline(command: str) -> None:
    assert hardline(command) is None
