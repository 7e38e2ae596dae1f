"""``gth_grep``: regex search over file *contents*, confined to the working directory.

Gaunt Sloth's contract: arguments ``{pattern, path?, include?, limit? (default 100)}``; output
"No matches found" or "Found N matches" then one ``path:`` block per file with ``  Line n: text``
lines (cut at 250 characters). ripgrep does the work when it is installed, the scanner in
``_scan.py`` otherwise; both feed one formatter, in path order, so the output is the same.
The scanner's matching runs in a worker process that is stopped when one line takes longer than
a few seconds (Python's ``re`` backtracks where ripgrep's engine does not; ``_fallback``).

The ``fileSet`` setting picks the corpus (``gitignore``: what git would track, without dot-files;
``all``: everything but the noise directories). ``.aiignore`` is applied to every result of either
engine, and a path escaping the working directory (symlinks included) is refused. Paths in the
output are relative to the working directory, so they can be handed to ``read_file`` as they are.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from gth_jupyter.tools._base import make_tool
from gth_jupyter.tools.fs.aiignore import NOISE_DIRS
from gth_jupyter.tools.fs.workspace import Workspace
from gth_jupyter.tools.grep._fallback import search_in_worker
from gth_jupyter.tools.grep._scan import Match, candidates, include_matcher
from gth_jupyter.tools.process import child_env

__all__ = ["find_ripgrep", "format_matches", "make_grep_tool"]

DEFAULT_LIMIT = 100
MAX_LINE_LENGTH = 250
TRUNCATION_MARKER = " … (line truncated)"
_RG_MAX_OUTPUT = 32 * 1024 * 1024
_RG_TIMEOUT_S = 120

DESCRIPTION = (
    "Search file CONTENTS by regular expression (ripgrep-backed, with an in-process fallback). "
    "Use this to find WHERE a symbol, string, or pattern appears across files; search_files "
    "matches file NAMES only. Returns matching files with 1-based line numbers and a bounded "
    "preview of each matching line.\n\nArgs: pattern (regex, required); path (relative dir/file, "
    'defaults to the working directory); include (file glob such as "*.py" or "*.{ts,tsx}"); '
    "limit (max matches). Searches are confined to the working directory."
)


class GrepArgs(BaseModel):
    pattern: str = Field(
        min_length=1, description="Regular expression to search file CONTENTS for."
    )
    path: str | None = Field(
        default=None,
        description="Relative directory or file to search, within the working directory. "
        "Defaults to the current working directory.",
    )
    include: str | None = Field(
        default=None, description='Optional file glob to filter matched files, e.g. "*.py".'
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"Maximum number of matches to return (default {DEFAULT_LIMIT}).",
    )


def find_ripgrep() -> str | None:
    """Where ``rg`` is, or ``None`` (tests monkeypatch this to exercise the fallback)."""
    return shutil.which("rg")


def format_matches(matches: list[Match]) -> str:
    """Gaunt Sloth's grouped output, shared by both engines."""
    if not matches:
        return "No matches found"
    lines = [f"Found {len(matches)} matches"]
    current = None
    for match in matches:
        if match.path != current:
            if current is not None:
                lines.append("")
            current = match.path
            lines.append(f"{match.path}:")
        text = match.text
        if len(text) > MAX_LINE_LENGTH:
            text = text[:MAX_LINE_LENGTH] + TRUNCATION_MARKER
        lines.append(f"  Line {match.line}: {text}")
    return "\n".join(lines)


def _target(workspace: Workspace, requested: str | None) -> Path:
    text = requested or "."
    lexical = Path(os.path.normpath(workspace.root / text))
    real = Path(os.path.realpath(lexical))
    if not workspace.inside(real):
        raise ToolException(
            f"Refusing to search '{text}': path escapes the working directory ({workspace.root})."
        )
    if not real.exists():
        raise ToolException(f"Path not found: {text}")
    if workspace.hides(real):
        raise ToolException(f"Refusing to search '{text}': it is hidden by .aiignore.")
    return real


def _rg_error(err: bytes, code: int | None) -> str:
    """What to say when rg fails. Only its regex errors are quoted: its other messages name
    files (one it could not read may be hidden by .aiignore), so they are summarised."""
    detail = err.decode("utf-8", "replace").strip()
    if detail.startswith("rg: regex parse error") or detail.startswith("regex parse error"):
        return detail
    return f"rg exited with {code} (some files could not be searched)"


async def _ripgrep(
    rg: str, workspace: Workspace, target: Path, pattern: str, file_set: str
) -> list[Match]:
    args = ["--line-number", "--no-heading", "--with-filename", "--color=never", "--null"]
    args.append("--no-require-git")
    for noise in sorted(NOISE_DIRS):
        args += ["--glob", f"!{noise}"]
    if file_set == "all":
        args += ["--no-ignore", "--hidden"]
    args += ["-e", pattern, "--", workspace.relative(target)]
    process = await asyncio.create_subprocess_exec(
        rg,
        *args,
        cwd=workspace.root,
        # The allow-listed environment: no secrets, and no RIPGREP_CONFIG_PATH adding options.
        env=child_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=_RG_MAX_OUTPUT,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), _RG_TIMEOUT_S)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise ToolException(f"Search failed: ripgrep took longer than {_RG_TIMEOUT_S}s") from None
    if process.returncode == 1:
        return []
    if process.returncode != 0 and not out:
        raise ToolException(f"Search failed: {_rg_error(err, process.returncode)}")
    matches: list[Match] = []
    for raw in out.decode("utf-8", "replace").split("\n"):
        path, sep, rest = raw.partition("\0")
        number, colon, text = rest.partition(":")
        if sep and colon and number.isdigit():
            matches.append(Match(path.removeprefix("./"), int(number), text))
    return matches


async def grep(
    workspace: Workspace, args: GrepArgs, *, file_set: str = "gitignore", rg: str | None = None
) -> str:
    """Run one search and format it; errors raise :class:`ToolException` with the message."""
    limit = args.limit or DEFAULT_LIMIT
    target = _target(workspace, args.path)
    if rg is not None:
        found = await _ripgrep(rg, workspace, target, args.pattern, file_set)
        # ``include`` is applied here, not as an rg --glob: rg lets a glob override .gitignore.
        include = include_matcher(args.include) if target.is_dir() else None
        matches = sorted(
            m
            for m in found
            if not workspace.aiignore.hides(m.path)
            and (include is None or include.fullmatch(m.path))
        )[:limit]
    else:
        try:
            regex = re.compile(args.pattern)
        except re.error as exc:
            raise ToolException(f"Search failed: invalid regular expression: {exc}") from None
        files = await asyncio.to_thread(
            candidates,
            workspace.root,
            target,
            file_set=file_set,
            include=include_matcher(args.include),
            hidden=workspace.aiignore.hides,
        )
        matches = await search_in_worker(workspace.root, files, regex.pattern, limit)
    return format_matches(matches)


def make_grep_tool(workspace: Workspace, settings: Mapping[str, Any]) -> BaseTool:
    """``gth_grep`` for ``workspace``; ``settings["fileSet"]`` is ``gitignore`` or ``all``."""
    file_set = str(settings.get("fileSet") or "gitignore")

    async def gth_grep(
        pattern: str, path: str | None = None, include: str | None = None, limit: int | None = None
    ) -> str:
        args = GrepArgs(pattern=pattern, path=path, include=include, limit=limit)
        return await grep(workspace, args, file_set=file_set, rg=find_ripgrep())

    return make_tool("gth_grep", DESCRIPTION, GrepArgs, gth_grep, "read")
