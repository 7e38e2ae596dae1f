"""Property tests: no generated parameter value gets an injected command past a custom tool.

Values are built from shell metacharacters, traversal, absolute paths, NUL and a payload that
would create a canary file. Validation alone runs over thousands of values; a real ``/bin/sh``
runs the tool for a few hundred, and the canary must never appear.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gth_jupyter.config.schema import CustomToolConfig
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.validation import ParameterError, build_command, validate_value

METAS = [";", "&", "&&", "|", "||", "`", "$", "$(", ")", "\n", "\r", "'", '"', "\\", ">", ">>", "<"]
PIECES = ["touch canary", "touch", "canary", " ", "x", "..", "/", "../", "\0", "(", "{", "}", "*"]
values = st.lists(st.sampled_from(METAS + PIECES), min_size=1, max_size=8).map("".join)
# Values made only of what validation lets through, so most of these really reach the shell.
SURVIVORS = ['"', "\\", "(", ")", "{", "}", "*", "#", "~", "-", "=", " ", "x", "touch canary"]
passing = st.lists(st.sampled_from(SURVIVORS), min_size=1, max_size=8).map("".join)
UNSAFE = (";", "&", "|", "`", "$", "\n", "\r", "'", "<", ">", "\0")


@settings(max_examples=2500, deadline=None)
@given(values)
def test_a_value_that_passes_validation_carries_nothing_dangerous(value: str) -> None:
    try:
        checked = validate_value(value, "p")
    except ParameterError:
        return
    assert not any(symbol in checked for symbol in UNSAFE)
    assert ".." not in checked and not checked.startswith("/")
    command = build_command("echo ${p}", {"p": value}, ["p"])
    assert command == f"echo {shlex.quote(checked)}"


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.one_of(passing, values))
def test_no_injected_command_ever_runs(value: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        spec = CustomToolConfig.model_validate(
            {"command": "echo ${p}", "description": "d", "parameters": {"p": {"description": "p"}}}
        )
        tool = make_custom_tool("echoer", spec, cwd)
        asyncio.run(tool.ainvoke({"p": value}))
        assert not (cwd / "canary").exists(), repr(value)
        assert os.listdir(cwd) == [], (repr(value), os.listdir(cwd))
