"""The standalone server's token: where it comes from, and how other processes are kept from it.

Whoever holds the token runs the agent's tools, so it must not leak to other programs of the
same machine, the agent's own shell commands included. Sources, in order of preference:

- ``--token-file PATH``: the first line of a file only its owner may read or write (the server
  refuses a file open to group or others, as ``ssh`` refuses such a key);
- ``$GTH_JUPYTER_TOKEN``;
- ``--token T``, kept for compatibility: ``/proc/<pid>/cmdline`` (what ``ps`` shows) is readable
  by every user, and Python cannot rewrite its own command line in place, so the process moves
  the token into ``$GTH_JUPYTER_TOKEN`` and re-executes itself without it (same pid, same
  files); the first command line lived only for the moment before the ``exec``;
- else a generated token, printed once.

Once read, ``GTH_JUPYTER_TOKEN`` leaves ``os.environ``, so nothing the server starts inherits it
(the tools' children get an allow-listed environment anyway). ``/proc/<pid>/environ`` still
shows the environment the process started with; on Linux the server marks itself non-dumpable
(``prctl(PR_SET_DUMPABLE, 0)``), which makes that file, ``/proc/<pid>/mem`` and ``ptrace``
root-only, so a command the agent runs as the same user cannot read the token there.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "ENV_VAR",
    "MIN_TOKEN_LENGTH",
    "TokenError",
    "argv_without_token",
    "check_token",
    "make_non_dumpable",
    "read_token_file",
    "reexec_without_token",
]

ENV_VAR = "GTH_JUPYTER_TOKEN"
#: Shorter tokens are refused: 16 characters of a URL-safe alphabet are ~96 bits.
MIN_TOKEN_LENGTH = 16

_PR_SET_DUMPABLE = 4


class TokenError(ValueError):
    """A token, or its file, the server refuses; the message says how to fix it."""


def check_token(token: str, source: str) -> str:
    """``token`` if it is long enough and travels in a header; ``source`` names where it came
    from in the refusal."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise TokenError(
            f"The token from {source} has {len(token)} characters; use at least "
            f"{MIN_TOKEN_LENGTH}, e.g. the output of: "
            "python -c 'import secrets; print(secrets.token_urlsafe(24))'"
        )
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise TokenError(
            f"The token from {source} must be printable ASCII without spaces "
            "(clients send it in an HTTP header)."
        )
    return token


def read_token_file(path: str) -> str:
    """The token on the first line of ``path``, which only its owner may read or write."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise TokenError(f"Cannot read the token file {path}: {exc.strerror}.") from None
    with os.fdopen(fd, encoding="utf-8", errors="strict") as handle:
        # The mode of the file actually opened, not of whatever the path names a moment later.
        mode = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise TokenError(f"The token file {path} is not a regular file.")
        if os.name == "posix" and mode & 0o077:
            raise TokenError(
                f"The token file {path} is open to group or others "
                f"(mode {stat.filemode(mode)}); anyone who reads it can run the agent's tools. "
                f"Run: chmod 600 {path}"
            )
        try:
            lines = handle.read(4096).splitlines()
        except UnicodeDecodeError:
            raise TokenError(f"The token file {path} is not UTF-8 text.") from None
    return check_token(lines[0].strip() if lines else "", f"the file {path}")


def argv_without_token(args: Sequence[str]) -> list[str]:
    """``args`` without ``--token T`` or ``--token=T`` (``--token-file`` stays)."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--token":
            skip = True
        elif not arg.startswith("--token="):
            kept.append(arg)
    return kept


def reexec_without_token(token: str) -> None:
    """Re-executes this process with ``token`` in ``$GTH_JUPYTER_TOKEN`` instead of argv.

    Returns only where that cannot be done (not POSIX, or the command line does not end with
    ``sys.argv``), after a loud warning on stderr.
    """
    tail = sys.argv[1:]
    original = list(getattr(sys, "orig_argv", []))
    head = original[: len(original) - len(tail)]
    if os.name != "posix" or not original or original[len(head) :] != tail:
        print(
            "gth-jupyter: WARNING: the token given with --token stays visible to every user "
            f"of this machine in the process list; use --token-file or ${ENV_VAR} instead.",
            file=sys.stderr,
            flush=True,
        )
        return
    env = dict(os.environ)
    env[ENV_VAR] = token
    sys.stdout.flush()
    sys.stderr.flush()
    # /proc/self/exe is the running interpreter itself, reachable even where its path is not
    # (a directory the user may not search, a venv link since replaced).
    exe = "/proc/self/exe" if os.path.exists("/proc/self/exe") else sys.executable
    os.execve(exe, [*head, *argv_without_token(tail)], env)


def token_in_command_line(token: str) -> bool:
    """Whether ``token`` shows in this process's command line (``ps``, ``/proc/<pid>/cmdline``)."""
    return any(token in arg for arg in getattr(sys, "orig_argv", sys.argv))


def take_env_token(environ: Mapping[str, str] | None = None) -> str | None:
    """``$GTH_JUPYTER_TOKEN``, removed from ``os.environ`` so that no child inherits it."""
    if environ is not None:
        return environ.get(ENV_VAR) or None
    return os.environ.pop(ENV_VAR, None) or None


def make_non_dumpable() -> bool:
    """Marks this process non-dumpable (Linux): ``/proc/<pid>/environ``, ``mem`` and ``ptrace``
    become root-only, and no core file is written. Whether it worked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0
    except (OSError, AttributeError):
        failed = True
    if failed:
        print(
            "gth-jupyter: WARNING: could not mark the server non-dumpable; processes of the "
            "same user may read its environment.",
            file=sys.stderr,
            flush=True,
        )
    return not failed


def token_file_path(value: str) -> str:
    """``value`` with ``~`` expanded, as a shell would for ``--token-file ~/...``."""
    return str(Path(value).expanduser())
