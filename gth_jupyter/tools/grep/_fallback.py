"""``gth_grep`` without ripgrep: the tree walked here, the lines matched in a worker process.

ripgrep's regex engine runs in linear time; Python's ``re`` backtracks, and a pattern such as
``(a+)+$`` can run for hours on one short line. A thread cannot be stopped, so the matching runs
in ``_worker``, and the worker is killed when it falls silent for :data:`MATCH_TIMEOUT_S`
seconds (it reports at least every quarter second while it makes progress, so only a match stuck
on one line goes silent), or when the whole search passes :data:`SEARCH_TIMEOUT_S`, ripgrep's
own limit. The error names the timeout and the file.

The worker starts in a fresh interpreter (``-I``: no ``PYTHONPATH``, user site or working
directory on its path) with the allow-listed environment. Importing ``gth_jupyter.tools`` loads
every tool, which takes seconds; the worker needs only three standard-library modules of it, so
the packages on the way (``gth_jupyter``, ``tools``, ``tools/fs``, ``tools/grep``) are stood in
for by empty ones pointing at their folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from pathlib import Path

from langchain_core.tools import ToolException

from gth_jupyter.tools.grep._scan import Match
from gth_jupyter.tools.process import child_env

__all__ = ["MATCH_TIMEOUT_S", "SEARCH_TIMEOUT_S", "search_in_worker"]

log = logging.getLogger(__name__)

#: How long one line may take to match before the search is stopped.
MATCH_TIMEOUT_S = 5.0
#: How long a whole search may take (as for ripgrep).
SEARCH_TIMEOUT_S = 120.0
#: The worker's first answer may wait for its interpreter to start on a busy machine.
_START_TIMEOUT_S = 30.0
_TOOLS = Path(__file__).resolve().parent.parent
#: The packages on the way to the worker's modules, each stood in for by an empty one.
_STAND_INS = [
    ("gth_jupyter", str(_TOOLS.parent)),
    ("gth_jupyter.tools", str(_TOOLS)),
    ("gth_jupyter.tools.fs", str(_TOOLS / "fs")),
    ("gth_jupyter.tools.grep", str(_TOOLS / "grep")),
]
_BOOT = f"""
import sys, types
for name, folder in {_STAND_INS!r}:
    package = types.ModuleType(name)
    package.__path__ = [folder]
    sys.modules[name] = package
from gth_jupyter.tools.grep._worker import main
main()
"""


def _too_slow(rel: str | None) -> ToolException:
    where = f" of {rel}" if rel else ""
    return ToolException(
        f"Search failed: the regular expression ran for more than {MATCH_TIMEOUT_S:g}s on one "
        f"line{where} and was stopped (timeout). Without ripgrep, Python's regex engine is used, "
        "which backtracks on patterns such as nested repetition, e.g. (a+)+; simplify the "
        "pattern."
    )


async def search_in_worker(root: Path, files: list[str], pattern: str, limit: int) -> list[Match]:
    """The matches of ``pattern`` in ``files`` (relative to ``root``), at most ``limit``;
    :class:`ToolException` when a line takes too long or the search does."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-c",
        _BOOT,
        cwd=root,
        env=child_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=1 << 20,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        job = {"root": str(root), "files": files, "pattern": pattern, "limit": limit}
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it died: EOF below
            process.stdin.write(json.dumps(job).encode())
            await process.stdin.drain()
            process.stdin.close()
        return await _collect(process.stdout)
    finally:
        if process.returncode is None:
            process.kill()
        with contextlib.suppress(ProcessLookupError):
            _, err = await process.communicate()
            if err:
                log.warning("gth_grep worker: %s", err.decode("utf-8", "replace")[-2000:])


async def _collect(stdout: asyncio.StreamReader) -> list[Match]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SEARCH_TIMEOUT_S
    matches: list[Match] = []
    current: str | None = None
    wait = _START_TIMEOUT_S
    while True:
        left = deadline - loop.time()
        try:
            raw = await asyncio.wait_for(stdout.readline(), min(wait, left))
        except asyncio.TimeoutError:
            if left <= wait:
                raise ToolException(
                    f"Search failed: the search took longer than {SEARCH_TIMEOUT_S:g}s (timeout)"
                ) from None
            raise _too_slow(current) from None
        if not raw:
            raise ToolException("Search failed: the search process ended unexpectedly")
        message = json.loads(raw)
        wait = MATCH_TIMEOUT_S
        if message[0] == "file":
            current = message[1]
        elif message[0] == "match":
            matches.append(Match(message[1], message[2], message[3]))
        elif message[0] == "end":
            return matches
