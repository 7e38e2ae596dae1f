"""Running a shell command for a tool: no stdin, no secrets, bounded time and output, live chunks.

Every tool that spawns a command (``run_shell_command``, the dev tools, custom tools) goes through
:func:`run_command`, so each gets the same hardening:

- stdin is ``/dev/null``: a command that prompts reads EOF instead of hanging the run;
- the environment is **allow-listed** (:func:`child_env`): only :data:`BASE_ENV` (``PATH``,
  ``HOME``, locale, ``VIRTUAL_ENV``...) and what the configuration's ``passEnv`` names (exact
  names or ``*`` globs) reach the child. Gaunt Sloth instead removes a deny-list of known
  credential names, which let ``MY_DB_PASSWORD`` or ``DATABASE_URL`` through. The host's own
  tokens (:data:`HOST_SECRETS`) are never matched by a glob, and the standalone server's token
  never passes at all;
- the command leads its own process group, so a timeout (SIGTERM, then SIGKILL after 3 s) or a
  cancelled run kills the whole tree, not just the shell;
- stdout and stderr are streamed live, chunk by chunk, to ``on_chunk``; what is *returned* keeps
  the head and the tail of the output within ``max_output_bytes``, and when it had to cut, the full
  output is written to a temporary file named in the cut marker. That file stops at
  :data:`MAX_SPILL_BYTES` and the live chunks at :data:`MAX_LIVE_BYTES`, so a command that
  prints without end (``yes``) fills neither the disk nor the event stream before its timeout.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fnmatch
import os
import signal
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = [
    "BASE_ENV",
    "HOST_SECRETS",
    "KILL_GRACE_S",
    "MAX_LIVE_BYTES",
    "MAX_SPILL_BYTES",
    "CommandResult",
    "OutputBuffer",
    "child_env",
    "run_command",
]

KILL_GRACE_S = 3.0
_DRAIN_AFTER_EXIT_S = 1.0
_READ_SIZE = 64 * 1024
MAX_SPILL_BYTES = 64 * 1024 * 1024
MAX_LIVE_BYTES = 4 * 1024 * 1024

#: What every child gets (when set): enough to find programs, the user's home, locale and
#: terminal, and the interpreter or toolchain the user activated. ``LC_*`` is a glob.
BASE_ENV: tuple[str, ...] = (
    *("PATH", "HOME", "USER", "LANG", "LC_*", "TZ", "TERM", "TMPDIR", "SHELL"),
    *("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "JAVA_HOME", "NODE_PATH"),
)
#: Tokens that authenticate to the host serving this agent. A ``passEnv`` glob (``*``,
#: ``JUPYTER*``) never matches them; only an exact name does, except ``GTH_JUPYTER_TOKEN``, the
#: standalone server's token, which no child ever gets.
HOST_SECRETS = frozenset(
    {"GTH_JUPYTER_TOKEN", "JUPYTER_TOKEN", "JPY_API_TOKEN", "JUPYTERHUB_API_TOKEN"}
)
_NEVER = frozenset({"GTH_JUPYTER_TOKEN"})


def child_env(
    pass_env: Iterable[str] = (), source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables of ``source`` (default ``os.environ``) a child may see: those named by
    :data:`BASE_ENV` or ``pass_env`` (exact names or ``*`` globs, case-sensitive as POSIX
    names are), minus the host's tokens (see :data:`HOST_SECRETS`)."""
    env = os.environ if source is None else source
    exact = {p for p in (*BASE_ENV, *pass_env) if "*" not in p}
    globs = [p for p in (*BASE_ENV, *pass_env) if "*" in p]
    kept: dict[str, str] = {}
    for name, value in env.items():
        if name in _NEVER:
            continue
        if name in exact or (
            name not in HOST_SECRETS and any(fnmatch.fnmatchcase(name, g) for g in globs)
        ):
            kept[name] = value
    return kept


class OutputBuffer:
    """Keeps everything up to ``budget`` bytes, then the first and last half of it; the full
    output then goes to a temporary file (``spill_path``), up to ``spill_limit`` bytes."""

    def __init__(self, budget: int | None, spill_limit: int = MAX_SPILL_BYTES) -> None:
        self.budget = budget
        self.spill_limit = spill_limit
        self.total = 0
        self._spilled = 0
        self._data = bytearray()
        self._head = b""
        self._spill: IO[bytes] | None = None
        self.spill_path: Path | None = None

    def append(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._spill is not None:
            self._write_spill(chunk)
        self._data += chunk
        if self.budget is None or self.total <= self.budget:
            return
        half = self.budget // 2
        if self._spill is None:
            fd, name = tempfile.mkstemp(prefix="gth-output-", suffix=".log")
            self._spill = os.fdopen(fd, "wb")
            self._write_spill(bytes(self._data))
            self.spill_path = Path(name)
            self._head = bytes(self._data[:half])
        del self._data[: max(0, len(self._data) - (self.budget - half))]

    def _write_spill(self, chunk: bytes) -> None:
        assert self._spill is not None
        room = self.spill_limit - self._spilled
        if room > 0:
            self._spill.write(chunk[:room])
            self._spilled += min(room, len(chunk))

    def text(self) -> str:
        if self._spill is None:
            return self._data.decode("utf-8", "replace")
        self._spill.close()
        omitted = self.total - len(self._head) - len(self._data)
        kept = "full output" if self._spilled == self.total else f"first {self._spilled} bytes"
        marker = f"\n... [{omitted} bytes omitted; {kept} in {self.spill_path}] ...\n"
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
    pass_env: Iterable[str] = (),
) -> CommandResult:
    """Run ``command`` with ``/bin/sh`` in ``cwd`` (see the module docstring); ``pass_env``: the
    configuration's ``passEnv``."""
    process = await asyncio.create_subprocess_shell(
        command,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=child_env(pass_env),
        start_new_session=True,
    )
    buffer = OutputBuffer(max_output_bytes)
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    assert process.stdout is not None

    async def pump() -> None:
        assert process.stdout is not None
        while chunk := await process.stdout.read(_READ_SIZE):
            live = buffer.total < MAX_LIVE_BYTES
            buffer.append(chunk)
            if on_chunk is None or not live:
                continue
            on_chunk(decoder.decode(chunk))
            if buffer.total >= MAX_LIVE_BYTES:
                on_chunk(
                    f"\n[live output stops after {MAX_LIVE_BYTES} bytes; the result keeps "
                    "the beginning and the end]\n"
                )

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
    if on_chunk is not None and buffer.total < MAX_LIVE_BYTES:
        if tail := decoder.decode(b"", final=True):
            on_chunk(tail)
    code = process.returncode
    return CommandResult(buffer.text(), None if timed_out else code, timed_out)
