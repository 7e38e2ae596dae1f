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


#: ``gth-jupyter`` for the suite, keeping threads in PostgreSQL: ``--memory`` (which the suite's
#: harness passes) becomes ``--checkpointer postgres``, on a fresh database per server (servers
#: of the suite reuse thread ids), made from the admin URL unless this is the server's re-exec.
POSTGRES_BIN = """#!{python}
import os, sys, uuid
import psycopg
from gth_jupyter.server.cli import main

if "GTH_JUPYTER_DATABASE_URL" not in os.environ:
    admin = os.environ["GTH_CONFORMANCE_ADMIN_URL"]
    name = "gth_conformance_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "%s"' % name)
    os.environ["GTH_JUPYTER_DATABASE_URL"] = admin.rpartition("/")[0] + "/" + name
args = [a for a in sys.argv[1:] if a != "--memory"]
if args[:1] == ["serve"]:
    args += ["--checkpointer", "postgres", "--run-lease-seconds", "5"]
sys.exit(main(args))
"""


def _drop_conformance_databases(admin: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        names = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'gth_conformance_%'"
        ).fetchall()
        for (name,) in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["memory", "postgres"])
def server_bin(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """The executable the suite starts: this interpreter's, or it on the postgres store."""
    if request.param == "memory":
        yield _server_bin()
        return
    admin: str = request.getfixturevalue("pg_admin_url")
    wrapper = tmp_path / "gth-jupyter-postgres"
    wrapper.write_text(POSTGRES_BIN.format(python=sys.executable))
    wrapper.chmod(0o755)
    os.environ["GTH_CONFORMANCE_ADMIN_URL"] = admin
    try:
        yield wrapper
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
