"""AG-UI 1.0 conformance with the official JS client: runs the Node suite in js/test/conformance.

The suite starts ``gth-jupyter serve`` processes with scripted fake models and drives them with
``@ag-ui/client``'s ``HttpAgent``, whose enforce and verify stages check every event. The server
executable is this interpreter's (``GTH_JUPYTER_BIN``), so the suite tests the code under test;
it runs twice, with threads in memory and in PostgreSQL.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.zygote import zygote

ROOT = Path(__file__).resolve().parents[2]
JS_DIR = ROOT / "js"
SUITE_DIR = JS_DIR / "test" / "conformance"
CLIENT_PACKAGE = JS_DIR / "node_modules" / "@ag-ui" / "client" / "package.json"
TIMEOUT_S = 300


def _server_bin() -> Path:
    scripts = Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin")
    return scripts / ("gth-jupyter.exe" if os.name == "nt" else "gth-jupyter")


def _text(output: str | bytes | None) -> str:
    if output is None:
        return ""
    return output.decode(errors="replace") if isinstance(output, bytes) else output


def _drop_conformance_databases(admin: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        names = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'gth_conformance_%'"
        ).fetchall()
        for (name,) in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def launchers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``gth-jupyter`` executables forked from a zygote that has imported the server once (a
    start is then milliseconds, not 1.5 s of CPU; see tests/zygote.py), one per mode."""
    with zygote(tmp_path_factory.mktemp("zygote")) as found:
        yield found


@pytest.fixture(params=["memory", "postgres"])
def server_bin(request: pytest.FixtureRequest, launchers: dict[str, Path]) -> Iterator[Path]:
    """The executable the suite starts: the server on threads in memory, or in PostgreSQL (a
    fresh database per server, made from the admin URL, see ``tests.zygote.postgres``)."""
    if request.param == "memory":
        yield launchers["plain"]
        return
    admin: str = request.getfixturevalue("pg_admin_url")
    os.environ["GTH_CONFORMANCE_ADMIN_URL"] = admin
    try:
        yield launchers["postgres"]
    finally:
        del os.environ["GTH_CONFORMANCE_ADMIN_URL"]
        _drop_conformance_databases(admin)


@pytest.mark.node
@pytest.mark.timeout(TIMEOUT_S + 30)
def test_official_agui_client_conformance(server_bin: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH; the AG-UI conformance suite needs Node.js >= 18")
    if not CLIENT_PACKAGE.is_file():
        pytest.skip("js/node_modules/@ag-ui/client is missing; run `npm ci` in js/")
    # The same files `node --test js/test/conformance/` finds; listed explicitly because newer
    # Node versions read --test arguments as globs, not directories.
    files = sorted(str(p.relative_to(JS_DIR)) for p in SUITE_DIR.glob("*.test.mjs"))
    assert files, f"no *.test.mjs files in {SUITE_DIR}"

    env = dict(os.environ)
    if server_bin.is_file():
        env["GTH_JUPYTER_BIN"] = str(server_bin)
    env["PATH"] = os.pathsep.join([str(_server_bin().parent), env.get("PATH", "")])

    # A process group of its own, so that a timeout also ends the servers node started.
    proc = subprocess.Popen(
        [node, "--test", f"--test-concurrency={len(files)}", *files],
        cwd=JS_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=os.name != "nt",
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        if os.name != "nt":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        output, _ = proc.communicate()
        pytest.fail(
            f"node --test did not finish within {TIMEOUT_S} s:\n{_text(output)}", pytrace=False
        )
    if proc.returncode != 0:
        pytest.fail(
            f"node --test {' '.join(files)} exited with {proc.returncode}:\n{_text(output)}",
            pytrace=False,
        )
