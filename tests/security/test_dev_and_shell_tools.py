"""Issue 8, item 10: the dev tools and ``run_shell_command`` read with an attacker's eyes.

``run_single_test``'s one argument had the custom-tool holes (pasted unquoted, a leading ``-``
passed: ``-p evil`` makes pytest import a module), and every process tool could be made to
write without bound: the spill file of a ``yes`` grew until the timeout, live output went
straight into the event stream, and custom tools kept all output in memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gth_jupyter.config.schema import CustomToolConfig
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.dev import make_dev_tool
from gth_jupyter.tools.process import MAX_LIVE_BYTES, OutputBuffer
from gth_jupyter.tools.shell import hardline, make_shell_tool
from tests.tools.conftest import output_text, run_call

from .conftest import command_output


def take_spill(result: str) -> bytes:
    """The spill file a cut result names, read and removed."""
    path = Path(result.split("output in ")[1].split("]")[0])
    data = path.read_bytes()
    path.unlink()
    return data


async def single_test(cwd: Path, template: str, path: str) -> tuple[str, str | None]:
    tool = make_dev_tool("run_single_test", {"command": template}, {}, cwd)
    assert tool is not None
    message = (await run_call([tool], "run_single_test", {"testPath": path})).message
    return str(message.content), message.status


async def test_a_test_path_cannot_add_find_actions(tmp_path: Path) -> None:
    content, status = await single_test(tmp_path, "find . -name", "x -o -exec touch PWNED {} +")
    assert status != "error", content
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("path", ["-p evil", "--rootdir=x", "./-k"])
async def test_a_test_path_cannot_be_an_option(tmp_path: Path, path: str) -> None:
    content, status = await single_test(tmp_path, "printf '[%s]'", path)
    assert status == "error"
    assert "Option injection attempts are not allowed in parameter 'testPath'" in content


@pytest.mark.parametrize("path", ["x /etc/passwd", "~/.ssh/id_rsa", "a:/etc"])
async def test_a_test_path_cannot_reach_outside(tmp_path: Path, path: str) -> None:
    content, status = await single_test(tmp_path, "cat", path)
    assert status == "error"
    assert "Absolute paths are not allowed for parameter 'testPath'" in content


@pytest.mark.parametrize("path", ["tests/it's_test.py", "tests/*.py", "tests/a b.py"])
async def test_a_test_path_is_one_literal_argument(tmp_path: Path, path: str) -> None:
    (tmp_path / "tests").mkdir()
    for name in ("a.py", "b.py"):
        (tmp_path / "tests" / name).write_text("")
    content, status = await single_test(tmp_path, "printf '[%s]' ${testPath}", path)
    assert status != "error", content
    assert command_output(content) == f"[{path}]"


async def test_live_output_stops_at_its_cap(tmp_path: Path) -> None:
    tool = make_shell_tool(tmp_path, {"maxOutputBytes": 1000})
    command = f"head -c {MAX_LIVE_BYTES + 2_000_000} /dev/zero | tr '\\0' x"
    result = await run_call([tool], "run_shell_command", {"command": command})
    live = output_text(result.events)
    assert MAX_LIVE_BYTES <= len(live) < MAX_LIVE_BYTES + 70_000
    assert live.endswith("the result keeps the beginning and the end]\n")
    assert len(take_spill(str(result.message.content))) == MAX_LIVE_BYTES + 2_000_000


def test_the_spill_file_stops_at_its_limit() -> None:
    buffer = OutputBuffer(100, spill_limit=1000)
    for _ in range(50):
        buffer.append(b"y\n" * 50)
    text = buffer.text()
    assert buffer.spill_path is not None
    try:
        assert buffer.spill_path.stat().st_size == 1000
        assert "bytes omitted; first 1000 bytes in" in text
        assert len(text.encode()) < 300
    finally:
        buffer.spill_path.unlink()


async def test_a_custom_tool_keeps_head_and_tail_not_all_output(tmp_path: Path) -> None:
    spec = CustomToolConfig.model_validate({"command": "seq 1 200000", "description": "d"})
    result = await make_custom_tool("counter", spec, tmp_path).ainvoke({})
    assert result.startswith("Executing 'seq 1 200000'...\n\n<COMMAND_OUTPUT>\n1\n2\n")
    assert "199999\n200000\n</COMMAND_OUTPUT>" in result
    assert len(result) < 101_000
    assert take_spill(result).count(b"\n") == 200000


async def test_a_waived_null_byte_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    spec = CustomToolConfig.model_validate(
        {
            "command": "printf '[%s]' ${p}",
            "description": "d",
            "parameters": {"p": {"description": "p", "allow": ["null-bytes"]}},
        }
    )
    tool = make_custom_tool("nul", spec, tmp_path)
    result = await run_call([tool], "nul", {"p": "a\0b"})
    assert result.message.status == "error"
    assert "holds a null byte" in str(result.message.content)


# Asserted on hardline() alone: on code without the fix, running these would really delete.
@pytest.mark.parametrize(
    "command",
    ["rm -rf //", "rm -rf ${HOME}/", "rm -r -f /.//*", "rm -rf -- $HOME/.", "rm -rf ~/.."],
)
def test_the_hardline_sees_root_and_home_however_spelt(command: str) -> None:
    assert hardline(command) == "recursive delete of the root or home directory"


def test_the_hardline_leaves_ordinary_deletes_alone() -> None:
    for command in ("rm -rf build/", "rm -rf ./dist", "rm -rf /tmp/x", "rm -rf .", "rm ~/a.txt"):
        assert hardline(command) is None, command
