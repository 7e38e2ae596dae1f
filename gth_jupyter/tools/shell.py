"""``run_shell_command``: an arbitrary shell command the model composes, behind the approvals gate.

Arguments ``{command, justification?}`` (the justification is for whoever approves). Settings from
``builtInTools.run_shell_command``: ``timeout`` in ms (default 120000) and ``maxOutputBytes``
(default 100000, head and tail kept). It runs in the working directory through
:func:`~gth_jupyter.tools.process.run_command` (no stdin, the allow-listed environment plus
``passEnv``, process-group kill); a non-zero exit or a timeout is an error result. Before anything
runs, a short hardline list refuses the few commands no approval should ever let through (wiping
``/`` or ``~``, formatting or overwriting a disk, a fork bomb, powering the machine off), whatever
the mode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from gth_jupyter.tools._base import InjectedRuntime, make_tool
from gth_jupyter.tools.commands import Runner

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_TIMEOUT_MS",
    "hardline",
    "make_shell_tool",
    "shell_runner",
]

DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_MAX_OUTPUT_BYTES = 100_000

_SEGMENTS = re.compile(r"[;&|\n]+|\$\(|`")
_HARDLINE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bmkfs(?:\.\w+)?\b"), "formatting a filesystem"),
    (re.compile(r"\bdd\b[^\n]*\bof=/dev/(?:sd|hd|nvme|vd|xvd|disk|mmcblk)"), "overwriting a disk"),
    (re.compile(r">\s*/dev/(?:sd|hd|nvme|vd|xvd|disk|mmcblk)"), "overwriting a disk"),
    (re.compile(r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:"), "a fork bomb"),
    (re.compile(r"(?:^|[;&|]\s*)(?:sudo\s+)?(?:shutdown|reboot|halt|poweroff)\b"), "powering off"),
)

DESCRIPTION = (
    "Run a shell command in the working directory and return its output. Use it when the other "
    "tools cannot do the job (building, testing, git, package managers). Each call may need the "
    "user's approval; give a short justification. The command gets no input (stdin is empty), "
    "is killed after the configured timeout, and long output is cut to its beginning and end."
)


class ShellArgs(BaseModel):
    command: str = Field(min_length=1, description="The shell command to run.")
    justification: str | None = Field(
        default=None, description="Why this command is needed (shown to whoever approves it)."
    )


def _is_root(word: str) -> bool:
    """``/`` or the home directory however spelt: ``//``, ``/./*``, ``${HOME}/``, ``~/..``."""
    for home in ("${HOME}", "$HOME"):
        if word.startswith(home):
            word = "~" + word[len(home) :]
    return word.startswith(("/", "~")) and word.rstrip("/.*") in ("", "~")


def _wipes_root(segment: str) -> bool:
    words = segment.replace('"', " ").replace("'", " ").split()
    while words and words[0] in ("sudo", "command", "exec", "nice"):
        words = words[1:]
    if not words or words[0] not in ("rm", "/bin/rm", "/usr/bin/rm"):
        return False
    flags = [w for w in words[1:] if w.startswith("-")]
    recursive = any(
        w == "--recursive" or (not w.startswith("--") and "r" in w.lower()) for w in flags
    )
    return recursive and any(_is_root(w) for w in words[1:] if not w.startswith("-"))


def hardline(command: str) -> str | None:
    """What catastrophic thing ``command`` would do, or ``None``."""
    if any(_wipes_root(segment) for segment in _SEGMENTS.split(command)):
        return "recursive delete of the root or home directory"
    for pattern, description in _HARDLINE:
        if pattern.search(command):
            return description
    return None


def shell_runner(cwd: Path, *settings: Mapping[str, Any], pass_env: Sequence[str] = ()) -> Runner:
    """How the shell and the dev tools run a command: raising on failure, with the ``timeout``
    (ms) and ``maxOutputBytes`` of the first of ``settings`` that sets them (a dev tool's own,
    then the shell's), else the defaults."""

    def first(key: str, default: float) -> float:
        return next((float(s[key]) for s in settings if s.get(key)), default)

    timeout = first("timeout", DEFAULT_TIMEOUT_MS)
    budget = int(first("maxOutputBytes", DEFAULT_MAX_OUTPUT_BYTES))
    return Runner(cwd, timeout, budget, errors=True, pass_env=pass_env)


def make_shell_tool(
    cwd: Path, settings: Mapping[str, Any], *, pass_env: Sequence[str] = ()
) -> BaseTool:
    """``run_shell_command`` working in ``cwd``; ``pass_env`` is the configuration's ``passEnv``."""
    run = shell_runner(cwd, settings, pass_env=pass_env)

    async def run_shell_command(
        command: str, justification: str | None = None, runtime: InjectedRuntime = None
    ) -> str:
        blocked = hardline(command)
        if blocked:
            raise ToolException(
                f"Refusing to execute '{command}': blocked by hardline safety policy ({blocked}). "
                "This is a catastrophic, non-recoverable command and is blocked even when "
                "command confirmation is disabled."
            )
        return await run(command, "run_shell_command", runtime)

    return make_tool("run_shell_command", DESCRIPTION, ShellArgs, run_shell_command, "shell")
