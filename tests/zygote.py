"""``gth-jupyter serve`` processes forked from one that has already imported the server.

A server's start is ~1.5 s of CPU, nearly all of it imports, and the Node conformance suite starts
some forty of them per run (twice: memory and PostgreSQL). The zygote imports the server once and
forks a child per start; the child runs ``gth_jupyter.server.cli.main`` (the console script's
entry) on the launcher's arguments, working directory, environment and standard streams, so it is
a real server process of its own, started as the command line would start it, minus the imports.

What starts one is :data:`LAUNCHER`, written where the suite expects the ``gth-jupyter``
executable (``GTH_JUPYTER_BIN``): a Python without ``site`` (milliseconds) that hands its request
and its three standard file descriptors to the zygote over a ``SOCK_SEQPACKET`` socket, forwards
SIGTERM, SIGINT and SIGHUP to the server, and exits as the server did. A launcher that is killed
(SIGKILL, its process group ended on a timeout) closes its connection, and the zygote then kills
its server: nothing outlives the suite.

The fork happens in a single-threaded process with no event loop (the zygote waits in
``selectors`` and learns of exits through SIGCHLD's wakeup fd), so the child starts as clean as an
``exec``. ``random`` reseeds itself in every child; tokens and ids come from ``os.urandom``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path

#: What a server's start imports (``cli.serve`` imports them lazily, after its first checks).
PRELOAD = (
    "gth_jupyter.server.cli",
    "gth_jupyter.agent.registry",
    "gth_jupyter.config.loader",
    "gth_jupyter.runs.journals",
    "gth_jupyter.store.checkpoint",
    "gth_jupyter.server.identity",
    "gth_jupyter.server.standalone",
    "gth_jupyter.models.fake",
    "langgraph.graph",
    "langchain_core.messages",
)
#: Modes a request may name: the child runs this module's function of that name.
MODES = ("plain", "postgres")

LAUNCHER = """#!{python} -IS
# Starts `gth-jupyter` by asking the test zygote (tests/zygote.py) to fork one.
import json, os, signal, socket, sys
conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
conn.connect({socket_path!r})
request = {{"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ), "mode": {mode!r}}}
socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
pid = json.loads(conn.recv(65536))["pid"]
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(number, lambda n, _frame: os.kill(pid, n))
answer = conn.recv(65536)
code = json.loads(answer)["exit"] if answer else 1
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


def plain(argv: list[str]) -> int:
    from gth_jupyter.server.cli import main

    return main(argv)


def postgres(argv: list[str]) -> int:
    """``serve`` keeping threads in PostgreSQL, on a fresh database (servers of the suite reuse
    thread ids) made from ``$GTH_CONFORMANCE_ADMIN_URL``; ``--memory`` (which the suite's harness
    passes) becomes ``--checkpointer postgres``."""
    import uuid

    import psycopg

    admin = os.environ["GTH_CONFORMANCE_ADMIN_URL"]
    name = "gth_conformance_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    os.environ["GTH_JUPYTER_DATABASE_URL"] = admin.rpartition("/")[0] + "/" + name
    args = [a for a in argv if a != "--memory"]
    if args[:1] == ["serve"]:
        args += ["--checkpointer", "postgres", "--run-lease-seconds", "5"]
    return plain(args)


def _child(request: dict, fds: list[int], keep: list[int]) -> None:
    """In the forked child: become the requested server, then exit with its status."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in keep:
            with contextlib.suppress(OSError):
                os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["gth-jupyter", *request["argv"]]
        # The streams are pipes now; line by line, as PYTHONUNBUFFERED would have them.
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
        mode = request.get("mode", "plain")
        code = globals()[mode](list(request["argv"])) if mode in MODES else 2
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def serve(socket_path: str) -> None:
    """The zygote: import the server, then fork one per request until stdin closes."""
    for name in PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(socket_path)
    listener.listen(128)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "reap")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")  # our parent gone: stop
    by_pid: dict[int, socket.socket] = {}
    by_conn: dict[socket.socket, int] = {}
    print("ready", flush=True)

    def close(conn: socket.socket) -> None:
        by_conn.pop(conn, None)
        with contextlib.suppress(Exception):
            selector.unregister(conn)
        conn.close()

    running = True
    while running:
        for key, _ in selector.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                request = json.loads(message)
                keep = [listener.fileno(), selector.fileno(), wake_r, wake_w, conn.fileno()]
                keep += [c.fileno() for c in by_conn]
                pid = os.fork()
                if pid == 0:
                    _child(request, fds, keep)
                for fd in fds:
                    os.close(fd)
                conn.sendall(json.dumps({"pid": pid}).encode())
                by_pid[pid], by_conn[conn] = conn, pid
                selector.register(conn, selectors.EVENT_READ, "launcher")
            elif key.data == "reap":
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_r, 4096)
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    conn = by_pid.pop(pid, None)
                    if conn is not None and conn in by_conn:
                        with contextlib.suppress(OSError):
                            conn.sendall(
                                json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode()
                            )
                        close(conn)
            elif key.data == "launcher":
                conn = key.fileobj
                assert isinstance(conn, socket.socket)
                with contextlib.suppress(OSError):
                    if conn.recv(16):
                        continue
                # The launcher went away (killed): so does its server.
                with contextlib.suppress(ProcessLookupError):
                    os.kill(by_conn[conn], signal.SIGKILL)
                close(conn)
            else:
                if not sys.stdin.buffer.read1(4096):  # type: ignore[attr-defined]
                    running = False
    for pid in list(by_pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    listener.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(socket_path)


@contextlib.contextmanager
def zygote(folder: Path) -> Iterator[dict[str, Path]]:
    """A zygote for the duration of the block; yields a launcher per mode (``plain``,
    ``postgres``), each an executable to use as ``gth-jupyter``."""
    # Its own short directory: a socket's path has at most 107 bytes.
    socket_path = Path(tempfile.mkdtemp(prefix="gth-zygote-")) / "sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.zygote", str(socket_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"the test zygote did not start: {line!r}")
        launchers = {}
        for mode in MODES:
            path = folder / f"gth-jupyter-{mode}"
            path.write_text(
                LAUNCHER.format(python=sys.executable, socket_path=str(socket_path), mode=mode)
            )
            path.chmod(0o755)
            launchers[mode] = path
        yield launchers
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(socket_path.parent, ignore_errors=True)


if __name__ == "__main__":
    serve(sys.argv[1])
