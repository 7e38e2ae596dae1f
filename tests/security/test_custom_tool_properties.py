"""Issue 8, item 1 as a property: whatever a model sends, a custom tool's program receives the
validated value as exactly one argv entry, and nothing else runs.

The tool's command is a real Python program that writes its argv as JSON; a real ``/bin/sh``
starts it. Values are built from shell metacharacters, spaces, options, globs, braces, ``~``
and payloads that would create a canary file. Parameter ``p`` has every check; ``q`` allows
``shell-injection`` and ``option-injection``, so that quoting alone must hold for it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gth_jupyter.config.schema import CustomToolConfig
from gth_jupyter.tools.custom import make_custom_tool
from gth_jupyter.tools.validation import ParameterError, validate_value

from .conftest import command_output

CANARY = "touch canary"
PIECES = [
    *(";", "&", "|", "`", "$", "$(", ")", "'", '"', "\\", ">", "<", "\n", "\t", " "),
    *("-", "--", "-o", "-exec", "{}", "+", "*", "?", "[a]", "{a,b}", "~", "=", ":", ",", "#"),
    *("x", "é", "..", ".", "/", "./", CANARY, "$(touch canary)", "`touch canary`", "!", "%s"),
]
values = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)
PRINTER = "import json, sys; sys.stdout.write(json.dumps(sys.argv[1:]))"
Q_ALLOW = ["shell-injection", "option-injection"]


def expected(value: str, allow: list[str]) -> str | None:
    try:
        return validate_value(value, "v", allow)
    except ParameterError:
        return None


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(values, values)
def test_each_validated_value_is_exactly_one_argv_entry_and_no_canary_appears(
    p: str, q: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        script, cwd = root / "argv.py", root / "work"
        script.write_text(PRINTER)
        cwd.mkdir()
        spec = CustomToolConfig.model_validate(
            {
                "command": f"{sys.executable} -I -S {script} ${{p}} ${{q}}",
                "description": "prints its argv",
                "parameters": {
                    "p": {"description": "p"},
                    "q": {"description": "q", "allow": Q_ALLOW},
                },
            }
        )
        tool = make_custom_tool("argv", spec, cwd)
        result = asyncio.run(tool.ainvoke({"p": p, "q": q}))
        want_p, want_q = expected(p, []), expected(q, Q_ALLOW)
        if want_p is not None and want_q is not None:
            assert json.loads(command_output(result)) == [want_p, want_q], (p, q, result)
        else:
            assert result.startswith("Execution of 'argv' was not allowed"), result
        assert list(cwd.iterdir()) == [], (p, q)
        assert sorted(root.iterdir()) == [script, cwd]
