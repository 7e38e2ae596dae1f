"""Running a shell command for a tool: no stdin, no secrets, bounded time and output, live chunks.

Every tool that spawns a command (``run_shell_command``, the dev tools, custom tools) goes through
:func:`run_command`, so each gets the same hardening, as in Gaunt Sloth:

- stdin is ``/dev/null``: a command that prompts reads EOF instead of hanging the run;
- the environment is scrubbed of provider and cloud credentials (:func:`scrubbed_env`);
- the command leads its own process group, so a timeout (SIGTERM, then SIGKILL after 3 s) or a
  cancelled run kills the whole tree, not just the shell;
- stdout and stderr are streamed live, chunk by chunk, to ``on_chunk``; what is *returned* keeps
  the head and the tail of the output within ``max_output_bytes``, and when it had to cut, the full
  output is written to a temporary file named in the cut marker.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import signal
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["KILL_GRACE_S", "CommandResult", "OutputBuffer", "run_command", "scrubbed_env"]

KILL_GRACE_S = 3.0
_DRAIN_AFTER_EXIT_S = 1.0
_READ_SIZE = 64 * 1024

_BLOCKLIST = frozenset(
    name.upper()
    for name in (
        "ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN CLAUDE_CODE_OAUTH_TOKEN OPENAI_API_KEY "
        "GOOGLE_API_KEY GEMINI_API_KEY GOOGLE_APPLICATION_CREDENTIALS GROQ_API_KEY XAI_API_KEY "
        "DEEPSEEK_API_KEY MISTRAL_API_KEY OPENROUTER_API_KEY COHERE_API_KEY TOGETHER_API_KEY "
        "PERPLEXITY_API_KEY FIREWORKS_API_KEY AZURE_OPENAI_API_KEY AZURE_API_KEY "
        "AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_ACCESS_KEY_ID LANGSMITH_API_KEY"
    ).split()
)
_KEEP = frozenset({"GITHUB_TOKEN", "GH_TOKEN"})  # the gh CLI needs them
_SECRET_SUFFIX = re.compile(r"(_API_KEY|_SECRET_ACCESS_KEY|_SECRET_KEY|_SECRET|_TOKEN)$", re.I)


def scrubbed_env(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """``source`` (default ``os.environ``) without credentials: the listed provider and cloud
    keys and any name ending in ``_API_KEY``, ``_SECRET``, ``_SECRET_KEY`` or ``_TOKEN``
    (``GITHUB_TOKEN`` and ``GH_TOKEN`` stay)."""
    env = os.environ if source is None else source
    return {
        k: v
        for k, v in env.items()
        if k.upper() in _KEEP or not (k.upper() in _BLOCKLIST or _SECRET_SUFFIX.search(k))
    }


class OutputBuffer:
    """Keeps everything up to ``budget`` bytes, then the first and last half of it; the full
    output then goes to a temporary file (``spill_path``)."""

    def __init__(self, budget: int | None) -> None:
        self.budget = budget
        self.total = 0
        self._data = bytearray()
        self._head = b""
        self._spill: IO[bytes] | None = None
        self.spill_path: Path | None = None

    def append(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._spill is not None:
            self._spill.write(chunk)
        self._data += chunk
        if self.budget is None or self.total <= self.budget:
            return
        half = self.budget // 2
        if self._spill is None:
            fd, name = tempfile.mkstemp(prefix="gth-output-", suffix=".log")
            self._spill = os.fdopen(fd, "wb")
            self._spill.write(self._data)
            self.spill_path = Path(name)
            self._head = bytes(self._data[:half])
        del self._data[: max(0, len(self._data) - (self.budget - half))]

    def text(self) -> str:
        if self._spill is None:
            return self._data.decode("utf-8", "replace")
        self._spill.close()
        omitted = self.total - len(self._head) - len(self._data)
        marker = f"\n... [{omitted} bytes omitted; full output in {self.spill_path}] ...\n"
        head = self._head.decode("utf-8", "replace")
        return head + marker + bytes(self._data).decode("utf-8", "replace")


@dataclass(frozen=True)
class CommandResult:
    output: str
    exit_code: int | None
    timed_out: bool


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def run_command(
    command: str,
    *,
    cwd: Path,
    timeout_s: float | None = None,
    max_output_bytes: int | None = None,
    on_chunk: Callable[[str], None] | None = None,
) -> CommandResult:
    """Run ``command`` with ``/bin/sh`` in ``cwd`` (see the module docstring)."""
    process = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=scrubbed_env(),
        start_new_session=True,
    )
    buffer = OutputBuffer(max_output_bytes)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    assert process.stdout is not None

    async def pump() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(_READ_SIZE):
            buffer.append(chunk)
            if on_chunk is not None:
                on_chunk(decoder.decode(chunk))

    reader = asyncio.ensure_future(pump())
    timed_out = False
    try:
        try:
            await asyncio.wait_for(process.wait(), timeout_s)
        except asyncio.TimeoutError:
            timed_out = True
            _signal_group(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), KILL_GRACE_S)
            except asyncio.TimeoutError:
                _signal_group(process.pid, signal.SIGKILL)
                await process.wait()
        # A grandchild that escaped the group may hold the pipe open; do not wait on it forever.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), _DRAIN_AFTER_EXIT_S)
    finally:
        if process.returncode is None:  # the run was cancelled: take the command down with it
            _signal_group(process.pid, signal.SIGKILL)
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
    if on_chunk is not None and (tail := decoder.decode(b"", final=True)):
        on_chunk(tail)
    code = process.returncode
    return CommandResult(buffer.text(), None if timed_out else code, timed_out)
