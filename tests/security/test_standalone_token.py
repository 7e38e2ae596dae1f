"""Item 5, second half: the standalone token stays out of other processes' view.

The review's repro: ``ps -o args= -p $PPID`` from a shell command showed the server's ``--token``.
Here a real ``gth-jupyter serve`` runs, and another process of the *same* user (as uid 65534
through ``setpriv`` when the tests run as root, where root could read anything) looks at it
through ``ps`` and ``/proc``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

TOKEN = "argv-token-Zq8dL2mX9pR4"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
AS_ROOT = os.geteuid() == 0


def same_user() -> list[str]:
    """The prefix that runs a command as the unprivileged user the server runs as."""
    if not AS_ROOT:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no unprivileged user to look with")
    return NOBODY


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A directory the unprivileged user can read (pytest's tmp_path is root's only)."""
    path = Path(tempfile.mkdtemp(prefix="gth-token-"))
    path.chmod(0o755)
    (path / "c.json").write_text(json.dumps({"llm": {"type": "fake", "responses": ["x"]}}))
    (path / "c.json").chmod(0o644)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def start(workdir: Path) -> Iterator[object]:
    procs: list[subprocess.Popen[str]] = []

    def run(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int]:
        port = free_port()
        base = {k: v for k, v in os.environ.items() if k != "GTH_JUPYTER_TOKEN"}
        base.update({"HOME": str(workdir), "PYTHONDONTWRITEBYTECODE": "1"}, **(env or {}))
        cmd = [sys.executable, "-m", "gth_jupyter.server.cli", "serve", "--memory"]
        proc = subprocess.Popen(
            [*same_user(), *cmd, "--port", str(port), "-c", str(workdir / "c.json"), *args],
            cwd=workdir,
            env=base,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert "AG-UI server on" in banner, banner + proc.stdout.read()
        return proc, port

    yield run
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def look(pid: int, what: str) -> subprocess.CompletedProcess[bytes]:
    """``cat /proc/<pid>/<what>`` as the server's own (unprivileged) user."""
    return subprocess.run(
        [*same_user(), "cat", f"/proc/{pid}/{what}"], capture_output=True, timeout=10
    )


def works_with(port: int, token: str) -> bool:
    response = httpx.get(
        f"http://127.0.0.1:{port}/health", headers={"Authorization": f"token {token}"}
    )
    return response.status_code == 200


@pytest.mark.parametrize("form", [["--token", TOKEN], [f"--token={TOKEN}"]])
def test_token_given_with_dash_dash_token_leaves_the_process_list(start, form) -> None:
    proc, port = start(*form)
    shown = subprocess.run(
        ["ps", "-o", "args=", "-p", str(proc.pid)], capture_output=True, text=True, check=True
    ).stdout
    assert "gth_jupyter.server.cli serve" in shown  # the same process, re-executed
    assert TOKEN not in shown and "--token" not in shown
    cmdline = look(proc.pid, "cmdline")
    assert cmdline.returncode == 0 and b"serve" in cmdline.stdout
    assert TOKEN.encode() not in cmdline.stdout
    assert works_with(port, TOKEN)


def test_the_server_is_non_dumpable_so_its_user_cannot_read_its_environment(start) -> None:
    proc, port = start(env={"GTH_JUPYTER_TOKEN": TOKEN})
    status = Path(f"/proc/{proc.pid}/status").read_text()
    real_uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
    # proc(5): while a process's dumpable attribute is not 1, its /proc/<pid> files belong to
    # root, whoever runs it: PR_GET_DUMPABLE is 0, seen from outside.
    if real_uid != 0:
        assert os.stat(f"/proc/{proc.pid}/environ").st_uid == 0
    environ = look(proc.pid, "environ")
    assert environ.returncode != 0 and b"Permission denied" in environ.stderr
    assert TOKEN.encode() not in environ.stdout
    assert look(proc.pid, "cmdline").returncode == 0  # refused for dumpability, not access
    assert works_with(port, TOKEN)


def test_token_file_readable_only_by_its_owner(start, workdir: Path) -> None:
    token_file = workdir / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    if AS_ROOT:
        os.chown(token_file, 65534, 65534)
    proc, port = start("--token-file", str(token_file))
    assert works_with(port, TOKEN)
    assert (
        TOKEN
        not in subprocess.run(
            ["ps", "-o", "args=", "-p", str(proc.pid)], capture_output=True, text=True
        ).stdout
    )


@pytest.mark.parametrize(("mode", "content"), [(0o644, TOKEN), (0o640, TOKEN), (0o600, "short")])
def test_a_token_file_open_to_others_or_too_short_is_refused(
    workdir: Path, mode: int, content: str
) -> None:
    token_file = workdir / "token"
    token_file.write_text(content + "\n")
    token_file.chmod(mode)
    env = {k: v for k, v in os.environ.items() if k != "GTH_JUPYTER_TOKEN"}
    result = subprocess.run(
        [
            *(sys.executable, "-m", "gth_jupyter.server.cli", "serve", "--memory"),
            *("-c", str(workdir / "c.json"), "--token-file", str(token_file)),
        ],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 2
    if mode & 0o077:
        assert "open to group or others" in result.stderr
        assert f"chmod 600 {token_file}" in result.stderr
    else:
        assert "at least 16" in result.stderr
