"""A notebook kernel cannot find its server's database password.

A real Jupyter server runs the extension on a provisioned user's database URL, given the way a
hub gives it (``$GTH_JUPYTER_DATABASE_URL`` in the server's environment). Code in a kernel of
that server, running as the same user (as a ``run_python`` tool call would), then looks for the
password everywhere it can: its own environment, and the environment and command line of every
process it can read, the server's included. The server took the URL out of ``os.environ``
before starting any kernel and made itself non-dumpable, so none of them holds it.

Root reads any process's ``/proc/<pid>/environ``, dumpable or not, so as root the server (and
so its kernel) runs as ``nobody``; this machine's interpreter may sit under ``/root``, out of
that user's reach, in which case the system Python of the same version runs the same packages.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import psycopg
import pytest
from jupyter_client.blocking import BlockingKernelClient

from gth_jupyter.store.provision import provision_user, role_name
from tests.helpers import free_port
from tests.sse import sse_events

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux"),
    pytest.mark.timeout(300),
]

ROOT = Path(__file__).resolve().parents[2]

#: Run in the kernel with the password as NEEDLE: where it shows, and what could be read.
ATTACK = r"""
import glob, json, os, subprocess, time
needle = NEEDLE.encode()
names = (b"GTH_JUPYTER_DATABASE_URL", b"GTH_JUPYTER_REDIS_URL")
server = os.getppid()
found, denied, readable = [], [], 0
for key, value in os.environ.items():
    if needle in value.encode() or key.encode() in names:
        found.append("os.environ[%s]" % key)
for path in sorted(glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline")):
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        if path.startswith("/proc/%d/" % server):
            denied.append(path)
        continue
    readable += 1
    if needle in data or any(name in data for name in names):
        found.append(path)
try:
    with open("/proc/%d/mem" % server, "rb") as handle:
        handle.read(1)
    found.append("/proc/%d/mem opened" % server)
except OSError:
    pass
# The control: this user reads a dumpable process's environment, so a refusal is the server's.
# (Until the child has exec'd, its environ is still this process's: retry a little.)
child = subprocess.Popen(["sleep", "30"], env={"CANARY": "1"})
control = False
try:
    for _ in range(100):
        with open("/proc/%d/environ" % child.pid, "rb") as handle:
            control = b"CANARY=1" in handle.read()
        if control:
            break
        time.sleep(0.05)
finally:
    child.kill()
print(json.dumps({"found": found, "denied": denied, "readable": readable,
                  "control": control, "server": server, "uid": os.getuid()}))
"""


def launcher(home: Path) -> tuple[list[str], dict[str, str]]:
    """The command prefix and extra environment that start Python as an unprivileged user
    (``[]`` as one already); skips, saying why, where that cannot be done."""
    if os.geteuid() != 0:
        return [sys.executable], {}
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root without runuser: no unprivileged user to run the server")
    site = sysconfig.get_paths()["purelib"]
    extra = {"PYTHONPATH": os.pathsep.join([str(ROOT), site])}
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    prefix = [runuser, "-u", "nobody", "--", "/usr/bin/env", f"HOME={home}"]
    for python in (sys.executable, f"/usr/bin/python{version}"):
        probe = [*prefix, python, "-c", "import gth_jupyter.server, ipykernel, psycopg_pool"]
        env = {**os.environ, **extra}
        ok = subprocess.run(probe, env=env, capture_output=True, timeout=120).returncode == 0
        if ok:
            return [*prefix, python], extra
    pytest.skip(
        f"as root, the server must run as an unprivileged user (root reads every "
        f"/proc/<pid>/environ), but 'nobody' can run neither {sys.executable} nor "
        f"/usr/bin/python{version} with this project's packages"
    )


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="gth-kernel-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def kernel_output(connection_file: Path, code: str) -> str:
    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    # No heartbeat: a kernel still starting on a loaded machine misses its first beats, and the
    # client would take it for dead; kernel_info is asked again until it answers.
    client.start_channels(hb=False)
    out: list[str] = []

    def hook(message: dict[str, Any]) -> None:
        if message["msg_type"] == "stream":
            out.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            out.append("\n".join(message["content"]["traceback"]))

    try:
        client.wait_for_ready(timeout=90)
        client.execute_interactive(code, output_hook=hook, timeout=90)
    finally:
        client.stop_channels()
    return "".join(out)


def test_a_kernel_finds_the_database_password_nowhere(
    pg_url: str, users: tuple[str, str], folder: Path
) -> None:
    user, _ = users
    url = asyncio.run(provision_user(pg_url, user))
    password = unquote(urlsplit(url).password or "")
    assert len(password) > 20
    home, root, runtime = folder / "home", folder / "root", folder / "runtime"
    for path in (home, root, runtime, folder / "data", folder / "config"):
        path.mkdir()
    gsloth = {"llm": {"type": "fake", "responses": ["Hello from the shared store."]}}
    (root / ".gsloth.config.json").write_text(json.dumps(gsloth))
    server_config = {
        "ServerApp": {"jpserver_extensions": {"gth_jupyter": True}},
        "GthJupyterApp": {"checkpointer": "postgres"},
    }
    (folder / "config" / "jupyter_server_config.json").write_text(json.dumps(server_config))
    prefix, extra = launcher(home)
    if os.geteuid() == 0:
        shutil.chown(folder, "nobody")
        for path in folder.rglob("*"):
            shutil.chown(path, "nobody")
    token, port = secrets.token_urlsafe(24), free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_DATA_DIR": str(folder / "data"),
        "JUPYTER_CONFIG_DIR": str(folder / "config"),
        "IPYTHONDIR": str(home / ".ipython"),
        "JUPYTER_TOKEN": token,
        "GTH_JUPYTER_DATABASE_URL": url,
        **extra,
    }
    command = [
        *prefix,
        "-m",
        "jupyter_server",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        "--GthJupyterApp.checkpointer=postgres",
    ]
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        command, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"token {token}"}
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            deadline = time.monotonic() + 120
            while True:
                assert server.poll() is None, (folder / "server.log").read_text()
                try:
                    if http.get("/api/status").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, (folder / "server.log").read_text()
                time.sleep(0.3)
            # The server works on the user's database...
            body = {
                "threadId": "kernel-test",
                "runId": "r1",
                "protocolVersion": "1.0",
                "messages": [{"id": "u1", "role": "user", "content": "hi"}],
            }
            answer = http.post("/gth/agents/default/run", json=body)
            assert answer.status_code == 200, answer.text
            text = "".join(e.get("delta", "") for e in sse_events(answer.text))
            assert text == "Hello from the shared store."
            # ...and a kernel of it looks for the password.
            kernel = http.post("/api/kernels", json={"name": "python3"}).json()
            connection = runtime / f"kernel-{kernel['id']}.json"
            attack = ATTACK.replace("NEEDLE", json.dumps(password))
            output = kernel_output(connection, attack)
        result = json.loads(output.strip().splitlines()[-1])
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
    assert result["uid"] == os.geteuid() or (os.geteuid() == 0 and result["uid"] != 0)
    assert result["found"] == [], result
    assert result["control"] and result["readable"] > 0, result
    # The server's environment still holds the URL it started with; non-dumpable, it is
    # closed to the kernel (the same user) all the same.
    assert f"/proc/{result['server']}/environ" in result["denied"], result
    assert password not in (folder / "server.log").read_text()
    schema = role_name(user)
    with psycopg.connect(pg_url) as admin:
        owner = admin.execute(
            f'SELECT owner FROM "{schema}".gth_threads WHERE thread_id = %s', ("kernel-test",)
        ).fetchone()
        stored = admin.execute(
            f'SELECT count(*) FROM "{schema}".checkpoints WHERE thread_id = %s', ("kernel-test",)
        ).fetchone()
    assert owner is not None and stored is not None and stored[0] > 0
