"""Running a command for a tool and wording the result as Gaunt Sloth does.

The result reads ``Executing '<cmd>'...``, the output inside ``<COMMAND_OUTPUT>`` tags, then how
it ended: "completed successfully", "exited with code N", or a timeout line. The shell and dev
tools raise :class:`~langchain_core.tools.ToolException` on a non-zero exit or a timeout, so the
``ToolMessage`` has status ``error`` (with the same text); custom tools return those texts as
ordinary results, as Gaunt Sloth's custom toolkit does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.tools import ToolException

from gth_jupyter.tools._base import emit_output
from gth_jupyter.tools.process import CommandResult, run_command

__all__ = ["Runner", "execute", "writer_of"]


def writer_of(runtime: Any) -> tuple[Callable[[Any], None] | None, str | None]:
    """The stream writer and tool call id of an injected ``ToolRuntime`` (``None`` outside one)."""
    if runtime is None:
        return None, None
    return getattr(runtime, "stream_writer", None), getattr(runtime, "tool_call_id", None)


def _body(command: str, result: CommandResult) -> str:
    return f"Executing '{command}'...\n\n<COMMAND_OUTPUT>\n{result.output}</COMMAND_OUTPUT>\n"


async def execute(
    command: str,
    *,
    name: str,
    cwd: Path,
    runtime: Any,
    timeout_ms: float | None,
    max_output_bytes: int | None,
    errors: bool,
    pass_env: Sequence[str] = (),
) -> str:
    """Run ``command`` for the tool ``name``, streaming its output; see the module docstring.

    ``errors``: raise ``ToolException`` on failure (shell, dev tools) or return the text (custom
    tools, whose timeout is in seconds and worded "timed out after N seconds"). ``pass_env``:
    the configuration's ``passEnv`` (see ``process.py``).
    """
    if "\0" in command:  # no command line can carry one; say so rather than crash
        raise ToolException(f"Refusing to execute the command of '{name}': it holds a null byte")
    writer, call_id = writer_of(runtime)
    emit_output(writer, name, call_id, f"🔧 Executing {name}: {command}\n", notice=True)
    result = await run_command(
        command,
        cwd=cwd,
        timeout_s=timeout_ms / 1000 if timeout_ms else None,
        max_output_bytes=max_output_bytes,
        on_chunk=lambda chunk: emit_output(writer, name, call_id, chunk),
        pass_env=pass_env,
    )
    body = _body(command, result)
    if result.timed_out:
        seconds = (timeout_ms or 0) / 1000
        if not errors:
            return f"{body}\n\nCommand '{command}' timed out after {seconds:g} seconds"
        raise ToolException(
            f"{body}\n\nCommand '{command}' was killed after exceeding the {round(seconds)}s "
            "timeout. If it legitimately needs longer, increase the shell timeout in config."
        )
    if result.exit_code == 0:
        return f"{body}\n\nCommand '{command}' completed successfully"
    text = f"{body}\n\nCommand '{command}' exited with code {result.exit_code}"
    if errors:
        raise ToolException(text)
    return text


@dataclass(frozen=True)
class Runner:
    """How one tool runs its commands (see :func:`execute`): in ``cwd``, within its timeout (in
    ms, or none) and output budget; ``errors``: raise on failure rather than say it."""

    cwd: Path
    timeout_ms: float | None
    max_output_bytes: int | None
    errors: bool
    pass_env: Sequence[str] = ()

    def __call__(self, command: str, name: str, runtime: Any) -> Awaitable[str]:
        return execute(
            command,
            name=name,
            cwd=self.cwd,
            runtime=runtime,
            timeout_ms=self.timeout_ms,
            max_output_bytes=self.max_output_bytes,
            errors=self.errors,
            pass_env=self.pass_env,
        )
