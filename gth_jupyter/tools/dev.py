"""The dev-command tools: ``run_tests``, ``run_lint``, ``run_build``, ``run_single_test``.

Each runs the shell command configured for it (``builtInTools.run_tests: {"command": "npm
test"}``); one without a ``command`` is not created (and a warning is logged). They take no
arguments, except ``run_single_test {testPath}``, whose path is validated like a custom-tool
parameter (relative, no traversal, no shell metacharacters, no NUL, and no leading ``-``: a
``testPath`` of ``-p evil`` would make pytest import a module), then quoted as one argument and
substituted for ``${testPath}`` or appended. A template with ``${testPath}`` inside quotes is
refused (the configuration refuses it on load; a tool built by hand raises ``ValueError``). The
command runs with the allow-listed environment plus ``passEnv`` (see ``process.py``). A non-zero
exit or timeout is an error result. Timeout and output
budget: the tool's own ``timeout`` (ms) and ``maxOutputBytes``, else ``run_shell_command``'s,
else 120000 ms and 100000 bytes.

Gaunt Sloth offers these only in ``code``/``exec``; here a command that lists them gets them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from gth_jupyter.config.command_template import unsafe_placeholders
from gth_jupyter.tools._base import InjectedRuntime, make_tool
from gth_jupyter.tools.shell import shell_runner
from gth_jupyter.tools.validation import ParameterError, build_command

__all__ = ["DEV_TOOLS", "make_dev_tool"]

log = logging.getLogger(__name__)

DEV_TOOLS: dict[str, str] = {
    "run_tests": "Run the project's full test suite (the configured command: {command}).",
    "run_lint": "Run the project's linter, possibly fixing issues (the configured command: "
    "{command}).",
    "run_build": "Build the project (the configured command: {command}).",
    "run_single_test": "Run a single test file, given its path relative to the working "
    "directory (the configured command: {command}).",
}
PLACEHOLDER = "${testPath}"


class NoArgs(BaseModel):
    pass


class SingleTestArgs(BaseModel):
    testPath: str = Field(description="Relative path to the test file to run")


def make_dev_tool(
    name: str,
    settings: Mapping[str, Any],
    shell: Mapping[str, Any],
    cwd: Path,
    *,
    pass_env: Sequence[str] = (),
) -> BaseTool | None:
    """The ``name`` dev tool, or ``None`` when no command is configured for it; ``pass_env`` is
    the configuration's ``passEnv``."""
    template = settings.get("command")
    if not isinstance(template, str) or not template.strip():
        log.warning('Built-in tool %s needs a command (e.g. {"command": "npm test"})', name)
        return None
    if name == "run_single_test" and unsafe_placeholders(template, ["testPath"]):
        raise ValueError(f"the command of run_single_test has {PLACEHOLDER} inside quotes")
    runner = shell_runner(cwd, settings, shell, pass_env=pass_env)

    async def run(command: str, runtime: InjectedRuntime) -> str:
        return await runner(command, name, runtime)

    description = DEV_TOOLS[name].format(command=template)
    if name != "run_single_test":

        async def run_fixed(runtime: InjectedRuntime = None) -> str:
            return await run(template, runtime)

        return make_tool(name, description, NoArgs, run_fixed, "exec", command=template)

    async def run_single_test(testPath: str, runtime: InjectedRuntime = None) -> str:
        try:
            command = build_command(template, {"testPath": testPath}, ["testPath"], dev_tool=True)
        except ParameterError as exc:
            raise ToolException(str(exc)) from None
        return await run(command, runtime)

    return make_tool(name, description, SingleTestArgs, run_single_test, "exec", command=template)
