"""Custom tools: the shell commands a user defines under ``customTools``.

``{"deploy": {"command": "npm run deploy -- ${env}", "description": "...", "parameters":
{"env": {"description": "...", "allow": [...]}}, "timeout": 120}}`` becomes a tool ``deploy``
taking one required string per parameter. Values are validated, then quoted so that each
reaches the command as exactly one argument (see ``validation.py``); the command runs in the
working directory with no stdin and the allow-listed environment plus ``passEnv`` (see
``process.py``); ``timeout`` (seconds) sends SIGTERM, then SIGKILL 3 s later. The description
gets "The configured command is [<command>]." appended, as in Gaunt Sloth.

Where we differ from Gaunt Sloth, for safety: a value is one argument (Gaunt Sloth pastes it
unquoted, so ``x -o -exec touch PWNED {} +`` became options of ``find``); a value starting with
``-`` is refused (``option-injection``); the result keeps the head and tail of the output within
100,000 bytes, like the shell tool, instead of holding all of it in the server's memory.

A value that fails validation never runs as is. Gaunt Sloth asks on stdin, which would hang a
notebook or a server; here the approvals middleware asks the person instead (through
:meth:`CustomCommandTool.check`), and when they approve, the call runs once inside
:func:`validation_waived`. Without that approval the tool returns an error naming the check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import Field, create_model

from gth_jupyter.config.command_template import unsafe_placeholders
from gth_jupyter.config.schema import CustomToolConfig
from gth_jupyter.tools._base import InjectedRuntime
from gth_jupyter.tools.commands import Runner, writer_of
from gth_jupyter.tools.kinds import KIND_KEY
from gth_jupyter.tools.shell import DEFAULT_MAX_OUTPUT_BYTES
from gth_jupyter.tools.validation import ParameterError, build_command

__all__ = ["CustomCommandTool", "make_custom_tool", "validation_waived"]

_WAIVED: ContextVar[frozenset[str]] = ContextVar("gth_validation_waived", default=frozenset())


@contextmanager
def validation_waived(tool_call_id: str) -> Iterator[None]:
    """Within this block the call ``tool_call_id`` runs even if its values fail validation."""
    token = _WAIVED.set(_WAIVED.get() | {tool_call_id})
    try:
        yield
    finally:
        _WAIVED.reset(token)


class CustomCommandTool(StructuredTool):
    """A configured command; :meth:`check` tells the approvals gate what would run."""

    spec: CustomToolConfig
    cwd: Path
    pass_env: list[str] = []

    def check(self, values: Mapping[str, Any]) -> tuple[str, str | None]:
        """``(command, error)``: the command the values make (unvalidated, but still quoted,
        when they fail) and the validation error, or ``None`` when they pass."""
        strings = {k: str(v) for k, v in values.items() if k in self._order()}
        try:
            return build_command(self.spec.command, strings, self._order(), self._allow()), None
        except ParameterError as exc:
            shown = build_command(self.spec.command, strings, self._order(), validate=False)
            return shown, str(exc)

    def _order(self) -> list[str]:
        return list(self.spec.parameters or {})

    def _allow(self) -> dict[str, list[str]]:
        return {k: list(p.allow or []) for k, p in (self.spec.parameters or {}).items()}

    async def run_command(self, values: Mapping[str, Any], runtime: Any) -> str:
        command, error = self.check(values)
        _, call_id = writer_of(runtime)
        if error is not None and (call_id is None or call_id not in _WAIVED.get()):
            raise ToolException(
                f"Execution of '{self.name}' was not allowed. Validation error: {error}. Nobody "
                'approved a one-time exception for this call; add "allow" to the parameter in '
                "customTools to skip this check permanently."
            )
        timeout = self.spec.timeout * 1000 if self.spec.timeout else None
        run = Runner(
            self.cwd, timeout, DEFAULT_MAX_OUTPUT_BYTES, errors=False, pass_env=self.pass_env
        )
        return await run(command, self.name, runtime)


def make_custom_tool(
    name: str, spec: CustomToolConfig, cwd: Path, *, pass_env: Sequence[str] = ()
) -> BaseTool:
    """The custom tool ``name`` working in ``cwd``; ``pass_env`` is the configuration's
    ``passEnv``. A placeholder inside quotes is refused (the configuration already refuses it
    on load; this guards a spec built by hand)."""
    if bad := unsafe_placeholders(spec.command, spec.parameters or {}):
        raise ValueError(f"the command of custom tool '{name}' has ${{{bad[0]}}} inside quotes")
    fields: dict[str, Any] = {
        param: (str, Field(description=p.description))
        for param, p in (spec.parameters or {}).items()
    }
    schema = create_model(f"{name}_args", **fields)
    holder: list[CustomCommandTool] = []

    async def run(runtime: InjectedRuntime = None, **values: Any) -> str:
        return await holder[0].run_command(values, runtime)

    tool = CustomCommandTool(
        name=name,
        description=f"{spec.description}\nThe configured command is [{spec.command}].",
        args_schema=schema,
        coroutine=run,
        handle_tool_error=True,
        metadata={KIND_KEY: "exec", "command": spec.command},
        spec=spec,
        cwd=cwd,
        pass_env=list(pass_env),
    )
    holder.append(tool)
    return tool
