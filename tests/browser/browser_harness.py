"""Real JupyterLab 4 / Notebook 7 servers and notebook pages for the browser tests.

A ``JupyterServer`` runs ``jupyter lab`` or ``jupyter notebook`` in a subprocess on a free
loopback port, behind a random token, with its own root, data, settings and workspace folders.
Its scripted model (``.gsloth.config.json`` in the root) holds the responses of every test that
runs on it, one block per test, in the tests' order. The first test to need the server starts
it; ``use_script(key)`` checks that the model has been called exactly as often as the blocks
before ``key`` need, and otherwise restarts the server with the script from ``key`` on, so a
failed test cannot shift the script of the next, and ``-k`` picks any test alone.

A ``ServerPool`` (one per pytest worker) shares a server between the modules that ask for the
same configuration (a ``ServerSpec``: the same ``CONFIG``, ``EXTRA_CONFIG`` and checkpointer):
its script is their blocks, module after module in the order they run, each module's keys
prefixed with its name (``server.scope``), so a server starts once for all of them. Servers
start in the background before they are needed: a module's Notebook 7 servers while its
JupyterLab tests run, the next module's JupyterLab servers while this one's last tests run; a
server no later module needs stops in the background. ``NotebookPage`` drives one notebook in
either app through the UI.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
import psutil
from playwright.sync_api import Locator, Page, expect

from tests.helpers import browser_lanes, free_port

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--use-fake-device-for-media-stream",
    "--use-fake-ui-for-media-stream",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APPS = ("lab", "notebook")
START_TIMEOUT_S = 90
# Steps in a page: generous for a loaded 2-core machine, short enough to fail in good time.
STEP_MS = 30_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def fake_config(responses: Sequence[Any], record_path: Path) -> dict[str, Any]:
    return {
        "llm": {
            "type": "fake",
            "responses": list(responses),
            "tokenDelayMs": 0,
            "recordPath": str(record_path),
        },
        "builtInTools": ["show_a2ui_surface"],
        "middleware": ["frontend-image-injection"],
    }


def write_config(
    folder: Path,
    responses: Sequence[Any],
    record_path: Path,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """The scripted model's configuration, with ``extra``'s top-level keys over it (tools,
    approvals, MCP servers, ...)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**fake_config(responses, record_path), **(extra or {})}, indent=1)
    (folder / ".gsloth.config.json").write_text(text, encoding="utf-8")


def write_notebook(path: Path, sources: Sequence[str]) -> None:
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]  # type: ignore[no-untyped-call]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))  # type: ignore[no-untyped-call]


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def kill_tree(proc: subprocess.Popen[bytes], grace_s: float = 15) -> None:
    """SIGTERM the server (it shuts its kernels down), then SIGKILL whatever is left of the
    tree. Kernels run in their own sessions, so they are collected by pid, not by group."""
    try:
        parent = psutil.Process(proc.pid)
        tree = [parent, *parent.children(recursive=True)]
    except psutil.NoSuchProcess:
        tree = []
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        pass
    _, alive = psutil.wait_procs([p for p in tree if p.is_running()], timeout=3)
    for p in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(alive, timeout=5)
    if proc.poll() is None:
        proc.kill()
        proc.wait(5)


@dataclass
class Script:
    """One test's block of the server's script, and the model calls it caused."""

    record_path: Path
    offset: int
    responses: list[Any]

    def records(self) -> list[dict[str, Any]]:
        return read_records(self.record_path)[self.offset :]

    def wait_records(self, n: int, timeout_s: float = 15) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while True:
            records = self.records()
            if len(records) >= n or time.monotonic() > deadline:
                return records
            time.sleep(0.1)


class JupyterServer:
    """``jupyter lab`` or ``jupyter notebook`` with the extension on the scripted model."""

    def __init__(
        self,
        app: str,
        home: Path,
        scripts: Mapping[str, Sequence[Any]],
        config: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        assert app in APPS, app
        # A whole configuration (the shipped demo, say) instead of the scripted model's.
        self.config = dict(config) if config is not None else None
        # Or keys over the scripted model's configuration (see write_config).
        self.extra = dict(extra or {})
        # Threads in memory, unless a test needs the kernel to share them (Session).
        self.checkpointer = "memory"
        self.app = app
        self.home = home
        self.root = home / "root"
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.order = list(self.scripts)
        self.token = secrets.token_hex(16)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.first_key: str | None = None
        self.generation = 0
        self.log_path = home / f"jupyter-{app}.log"
        self.record_path = home / "calls-0.jsonl"
        self._log: Any = None
        # The module whose tests run now, as the prefix of its keys (a shared server's script
        # holds several modules' blocks; "" for a module's own server).
        self.scope = ""
        self._starting: threading.Thread | None = None
        self._start_error: BaseException | None = None
        self.root.mkdir(parents=True, exist_ok=True)

    def key(self, key: str) -> str:
        """``key`` of the current module's blocks, as the script names it."""
        return f"{self.scope}{key}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                # The kernels' SQLite threads, the cookie secret and runtime files stay in here.
                "JUPYTER_DATA_DIR": str(self.home / "data"),
                "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"),
                "JUPYTERLAB_SETTINGS_DIR": str(self.home / "settings"),
                "JUPYTERLAB_WORKSPACES_DIR": str(self.home / "workspaces"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.pop("JUPYTER_TOKEN", None)
        return env

    def _write_settings(self) -> None:
        # No "official Jupyter news?" toast over the notebook.
        folder = self.home / "settings" / "@jupyterlab" / "apputils-extension"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False})
        )
        # No autosave: a test reads the file only after a save it awaited (save_now), and a
        # read while the page saves on its own could meet the atomic write half-way.
        folder = self.home / "settings" / "@jupyterlab" / "docmanager-extension"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))

    def start(self, from_key: str | None = None) -> None:
        """Starts the server with the script from ``from_key`` (as the script names it; by
        default the current module's first block) on."""
        if from_key is None:
            from_key = next((k for k in self.order if k.startswith(self.scope)), self.order[0])
        start = self.order.index(from_key)
        responses = [r for key in self.order[start:] for r in self.scripts[key]]
        self.generation += 1
        self.record_path = self.home / f"calls-{self.generation}.jsonl"
        if self.config is None:
            write_config(self.root, responses, self.record_path, self.extra)
        else:
            (self.root / ".gsloth.config.json").write_text(json.dumps(self.config))
        self._write_settings()
        self.port = free_port()
        self.first_key = from_key
        self._log = self.log_path.open("ab")
        self._log.write(f"\n==== start #{self.generation} (script from {from_key})\n".encode())
        self._log.flush()
        args = [
            sys.executable,
            "-m",
            "jupyter",
            self.app,
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--GthJupyterApp.checkpointer={self.checkpointer}",
            # Never ask PyPI for extensions (the lab extension is loaded by both apps).
            "--LabApp.extension_manager=readonly",
        ]
        self.proc = subprocess.Popen(
            args,
            cwd=self.home,
            env=self.env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter {self.app} exited: see {self.log_path}\n{self.log_tail()}"
                )
            try:
                self.api("GET", "api/status", timeout=2)
                return
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter {self.app} did not start:\n{self.log_tail()}")
            time.sleep(0.2)

    def start_soon(self, from_key: str) -> None:
        """Starts the server in a thread; the next call that needs it waits for the start (and
        starts it again itself, in the open, if that start failed)."""
        if self.proc is not None or self._starting is not None:
            return

        def run() -> None:
            try:
                self.start(from_key)
            except BaseException as exc:
                self._start_error = exc

        self._starting = threading.Thread(target=run, name=f"start-{self.app}", daemon=True)
        self._starting.start()

    def _join_start(self) -> None:
        thread, self._starting = self._starting, None
        if thread is None:
            return
        thread.join()
        if self._start_error is not None:
            self._start_error = None
            self.stop()

    def stop(self) -> None:
        self._join_start()
        if self.proc is not None:
            kill_tree(self.proc)
            self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self, from_key: str) -> None:
        self.stop()
        self.start(self.key(from_key))

    def log_size(self) -> int:
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def calls(self) -> int:
        return len(read_records(self.record_path))

    def ensure_started(self, from_key: str | None = None) -> None:
        self._join_start()
        if self.proc is None:
            self.start(None if from_key is None else self.key(from_key))

    def use_script(self, key: str) -> Script:
        """This test's block of the script, restarting the server if the model is not at the
        start of it (a test before this one failed mid-way, or ran in another order)."""
        self._join_start()
        key = self.key(key)
        if self.proc is None:
            self.start(key)
        assert self.first_key is not None
        start, here = self.order.index(self.first_key), self.order.index(key)
        expected = (
            sum(len(self.scripts[k]) for k in self.order[start:here]) if here >= start else -1
        )
        if expected < 0 or self.calls() != expected:
            self.stop()
            self.start(key)
            expected = 0
        return Script(self.record_path, expected, self.scripts[key])

    def shutdown_sessions(self) -> None:
        """End every kernel session (each test opens its own notebook)."""
        with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
            for session in self.api("GET", "api/sessions") or []:
                self.api("DELETE", f"api/sessions/{session['id']}")

    def thread(self, thread_id: str) -> dict[str, Any]:
        return dict(self.api("GET", f"gth/threads/{thread_id}"))

    def notebook_url(self, rel_path: str) -> str:
        if self.app == "lab":
            return f"{self.base_url}lab/tree/{rel_path}?reset&token={self.token}"
        return f"{self.base_url}notebooks/{rel_path}?token={self.token}"


def save_log(server: JupyterServer, log_name: str, start: int = 0) -> None:
    """The server's log from byte ``start`` on, as ``test-artifacts/browser/<log_name>-server.log``
    (its last 2 MB)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError), server.log_path.open("rb") as f:
        f.seek(max(start, server.log_size() - 2_000_000))
        (ARTIFACTS / f"{log_name}-server.log").write_bytes(f.read())


# Servers stopping in the background (a stop waits for the server's kernels and extensions to
# shut down, seconds the next module need not wait); waited for when the worker ends.
_STOPPING: list[threading.Thread] = []


def stop_soon(server: JupyterServer, log_name: str | None = None, log_start: int = 0) -> None:
    """Stops ``server`` in a thread, then saves its log (``save_log``) if ``log_name``."""

    def run() -> None:
        server.stop()
        if log_name is not None:
            save_log(server, log_name, log_start)

    thread = threading.Thread(target=run, name=f"stop-{server.app}")
    thread.start()
    _STOPPING.append(thread)


def wait_stopped() -> None:
    while _STOPPING:
        _STOPPING.pop().join()


@contextlib.contextmanager
def serving(server: JupyterServer, log_name: str) -> Iterator[JupyterServer]:
    """``server`` for a module's tests (each starts it when it first needs it); stopped at the
    end (in the background), its log kept as ``test-artifacts/browser/<log_name>-server.log``."""
    try:
        yield server
    finally:
        stop_soon(server, log_name)


@dataclass(frozen=True)
class ServerSpec:
    """A server a module's tests run on: the scripted model's blocks, one per test (``SCRIPTS``),
    and keys over its configuration (``EXTRA_CONFIG``) or a whole configuration (``CONFIG``),
    and where threads are kept (``CHECKPOINTER``)."""

    scripts: Mapping[str, Sequence[Any]] = field(default_factory=lambda: {"default": []})
    config: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] | None = None
    checkpointer: str = "memory"

    def signature(self) -> str:
        """What decides how the server runs: modules with the same signature share one."""
        return json.dumps([self.config, self.extra, self.checkpointer], sort_keys=True)


def module_servers(module: ModuleType) -> dict[str, ServerSpec] | None:
    """The servers a module declares: ``SERVERS`` (by name, the ``servers`` fixture), or one
    (``""``, the ``jupyter`` fixture) from ``SCRIPTS``, ``EXTRA_CONFIG``, ``CONFIG`` and
    ``CHECKPOINTER``; ``None`` for a module whose configuration depends on a fixture
    (``extra_config(request)``), which gets a server of its own."""
    if hasattr(module, "extra_config"):
        return None
    if hasattr(module, "SERVERS"):
        return dict(module.SERVERS)
    spec = ServerSpec(
        getattr(module, "SCRIPTS", {"default": []}),
        getattr(module, "CONFIG", None),
        getattr(module, "EXTRA_CONFIG", None),
        getattr(module, "CHECKPOINTER", "memory"),
    )
    return {"": spec}


class ServerPool:
    """This worker's servers, one per app and ``ServerSpec.signature``, shared by the modules
    (in ``modules``' order, the order they run in) that declare it; ``apps`` says which apps each
    module's tests use."""

    def __init__(
        self, home: Path, modules: Sequence[ModuleType], apps: Mapping[str, set[str]]
    ) -> None:
        self.home = home
        self.apps = apps
        self.specs: dict[str, dict[str, ServerSpec]] = {}
        self.order: list[str] = []
        # Each signature's users, in order: (module, server name).
        self.users: dict[str, list[tuple[str, str]]] = {}
        for module in modules:
            specs = module_servers(module)
            if specs is None:
                continue
            self.specs[module.__name__] = specs
            self.order.append(module.__name__)
            signatures = [spec.signature() for spec in specs.values()]
            assert len(set(signatures)) == len(signatures), f"{module.__name__}: two alike"
            for name, spec in specs.items():
                self.users.setdefault(spec.signature(), []).append((module.__name__, name))
        self.servers: dict[tuple[str, str], JupyterServer] = {}
        self.made = 0
        self.lanes = browser_lanes(int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
        # Where a server's log stood when a module started it early: (app, signature) ->
        # (module, offset), so that the module's log holds the start.
        self.marks: dict[tuple[str, str], tuple[str, int]] = {}

    @staticmethod
    def scope(module: str, name: str) -> str:
        return f"{module}::{name}::"

    def _server(self, app: str, signature: str) -> JupyterServer:
        server = self.servers.get((app, signature))
        if server is None:
            users = self.users[signature]
            scripts = {
                f"{self.scope(module, name)}{key}": block
                for module, name in users
                for key, block in self.specs[module][name].scripts.items()
            }
            spec = self.specs[users[0][0]][users[0][1]]
            self.made += 1
            home = self.home / f"{app}-{self.made}"
            server = JupyterServer(app, home, scripts, spec.config, spec.extra)
            server.checkpointer = spec.checkpointer
            self.servers[(app, signature)] = server
        return server

    def _first_key(self, module: str, name: str) -> str:
        spec = self.specs[module][name]
        return self.scope(module, name) + next(iter(spec.scripts), "default")

    @contextlib.contextmanager
    def using(self, module: ModuleType, app: str) -> Iterator[dict[str, JupyterServer]]:
        """``module``'s servers for ``app``, by name, with the module's keys in scope; at the
        end each server's log of these tests is saved as the module's, and a server no later
        module needs stops (in the background)."""
        specs = self.specs[module.__name__]
        servers: dict[str, JupyterServer] = {}
        starts: dict[str, int] = {}
        for name, spec in specs.items():
            server = self._server(app, spec.signature())
            server.scope = self.scope(module.__name__, name)
            servers[name] = server
            mark = self.marks.pop((app, spec.signature()), (module.__name__, server.log_size()))
            starts[name] = mark[1] if mark[0] == module.__name__ else server.log_size()
        apps = self.apps.get(module.__name__, {app})
        if app == "lab" and "notebook" in apps:
            # Notebook 7 is next: its servers start while these tests wait on their pages.
            self._start_soon(module.__name__, "notebook")
        elif module.__name__ in self.order[:-1] and self.lanes == 1:
            # This module's last app: the next module's JupyterLab servers start now (with one
            # browser worker; with more, which module this worker takes next is not known).
            self._start_soon(self.order[self.order.index(module.__name__) + 1], "lab")
        try:
            yield servers
        finally:
            for name, server in servers.items():
                log = slug(module.__name__) + "-" + app + (f"-{name}" if name else "")
                signature = specs[name].signature()
                if self.users[signature][-1] == (module.__name__, name):
                    stop_soon(server, log, starts[name])
                    del self.servers[(app, signature)]
                else:
                    save_log(server, log, starts[name])

    def _start_soon(self, module: str, app: str) -> None:
        for name, spec in self.specs[module].items():
            server = self._server(app, spec.signature())
            if server.proc is None and server._starting is None:
                self.marks[(app, spec.signature())] = (module, server.log_size())
                server.start_soon(self._first_key(module, name))

    def close(self) -> None:
        for server in self.servers.values():
            stop_soon(server)
        self.servers.clear()
        wait_stopped()


class NotebookPage:
    """One notebook opened in JupyterLab or Notebook 7, driven through the UI."""

    def __init__(self, page: Page, server: JupyterServer, name: str) -> None:
        self.page = page
        self.server = server
        self.name = name
        self.steps = 0
        self.rel_path = ""
        self.t0 = time.monotonic()
        self.timeline: list[tuple[str, float]] = []

    def mark(self, what: str) -> None:
        """Note how long into the test a step came (printed with the test's output)."""
        self.timeline.append((what, round(time.monotonic() - self.t0, 2)))

    @property
    def cells(self) -> Locator:
        return self.page.locator(".jp-Notebook .jp-Cell")

    def open(self, rel_path: str) -> None:
        self.server.ensure_started()
        self.rel_path = rel_path
        self.page.goto(self.server.notebook_url(rel_path))
        expect(self.cells.first).to_be_visible(timeout=60_000)
        self.mark("notebook shown")
        self.wait_kernel(rel_path)

    def wait_kernel(self, rel_path: str, timeout_s: float = 60) -> None:
        """Until the notebook's kernel is up, idle and connected to this page: JupyterLab
        drops a Shift+Enter pressed while its kernel is still connecting."""
        deadline = time.monotonic() + timeout_s
        while True:
            sessions = self.server.api("GET", "api/sessions") or []
            kernels = [
                s["kernel"] for s in sessions if s.get("path") == rel_path and s.get("kernel")
            ]
            if any(
                k.get("connections", 0) > 0 and k.get("execution_state") == "idle" for k in kernels
            ):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"the kernel of {rel_path} did not connect: {sessions}")
            time.sleep(0.2)
        expect(
            self.page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]")
        ).to_be_visible()
        self.mark("kernel connected")

    def run_cell(self, index: int) -> None:
        """Select the cell, press Shift+Enter, and wait for its execution count.

        While the app is still settling (restoring its layout, connecting the kernel) a
        keystroke can land elsewhere; the prompt then stays ``[ ]`` rather than turning to
        ``[*]``, so the press is repeated (a queued cell is never run twice)."""
        cell = self.cells.nth(index)
        prompt = cell.locator(".jp-InputPrompt")
        for attempt in range(4):
            cell.locator(".jp-InputArea-editor").click()
            self.page.keyboard.press("Shift+Enter")
            try:
                expect(prompt).to_have_text(re.compile(r"\[[*\d]+\]"), timeout=4000)
                break
            except AssertionError:
                self.mark(f"cell {index}: Shift+Enter not taken, again")
                if attempt == 3:
                    raise
        expect(prompt).to_have_text(re.compile(r"\[\d+\]"), timeout=60_000)
        self.mark(f"cell {index} ran")

    def run_cells(self, *indexes: int) -> None:
        for index in indexes:
            self.run_cell(index)

    def run_all(self, timeout_s: float = 120) -> None:
        """Run > Run All Cells from the menu bar, as a person does; waits until the last code
        cell has its execution count, none is queued or running, and the kernel is idle (a
        long notebook's cells out of view may not be drawn, so their prompts are not read)."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        code = self.page.locator(".jp-Notebook .jp-CodeCell")
        deadline = time.monotonic() + timeout_s
        while True:
            prompts = [p.strip() for p in code.locator(".jp-InputPrompt").all_inner_texts()]
            numbered = bool(prompts) and re.fullmatch(r"\[\d+\]:?", prompts[-1]) is not None
            queued = any("*" in p for p in prompts)
            sessions = self.server.api("GET", "api/sessions") or []
            idle = all(
                s["kernel"].get("execution_state") == "idle"
                for s in sessions
                if s.get("path") == self.rel_path and s.get("kernel")
            )
            if numbered and not queued and idle:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"Run All did not finish: {prompts}")
            time.sleep(0.2)
        self.mark("ran all")

    def save_now(self) -> dict[str, Any]:
        """Saves as the page does and, once that save has finished, reads the file's contents.

        Never read the file while a save is in flight: jupyter_server writes it atomically, and
        a read in the middle went through its recovery of the temporary file and lost the
        notebook (every later save and read was 404). Pressing Ctrl+S and polling the file races
        exactly so; the page's own save, awaited, does not (autosave is off on these servers)."""
        assert self.rel_path, "open() a notebook first"
        # The notebook extension's bridge: the active notebook's own save, awaited.
        self.page.evaluate(
            "async () => { const nb = globalThis.__gth_jupyter_notebook__?.current();"
            " if (!nb) throw new Error('no notebook is active'); await nb.save(); }"
        )
        model = self.server.api("GET", f"api/contents/{self.rel_path}?content=1")
        return dict(model["content"])

    def save_until(
        self, done: Callable[[dict[str, Any]], bool], timeout_s: float = 30, what: str = ""
    ) -> dict[str, Any]:
        """Saves (each save awaited, then the file read) until its contents pass ``done``: what
        the kernel or the page writes into the notebook may reach its model after a save."""
        deadline = time.monotonic() + timeout_s
        while True:
            content = self.save_now()
            if done(content):
                return content
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.rel_path} was not saved {what or 'as expected'}")
            time.sleep(0.5)

    def save(self, timeout_s: float = 30) -> None:
        """Saves until the file holds the chat's widget output (a reload restores the widget
        only from the saved notebook)."""

        def has_widget(content: dict[str, Any]) -> bool:
            outputs = [o for c in content["cells"] for o in c.get("outputs", [])]
            return any(WIDGET_VIEW in o.get("data", {}) for o in outputs)

        self.save_until(has_widget, timeout_s, "with the widget output")
        self.mark("saved")

    def widget(self, index: int = -1) -> Locator:
        roots = self.page.locator(".gth-root")
        return roots.last if index == -1 else roots.nth(index)

    def ready_widget(self, index: int = -1) -> Locator:
        root = self.widget(index)
        expect(root).to_have_attribute("data-ready", "true", timeout=60_000)
        return root

    def shot(self, step: str, root: Locator | None = None) -> Path:
        """A screenshot of the page with ``root`` (by default the last chat) in view."""
        self.steps += 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{self.name}-{self.steps:02d}-{slug(step)}.png"
        with contextlib.suppress(Exception):
            if root is not None:
                root.scroll_into_view_if_needed(timeout=2000)
            elif self.page.locator(".gth-root").count():
                self.widget().scroll_into_view_if_needed(timeout=2000)
        self.page.screenshot(path=str(path))
        self.mark(f"screenshot {path.name}")
        return path


def transcript(root: Locator) -> list[tuple[str, str]]:
    """The chat's messages as (role, text), in order."""
    items = root.locator(".gth-msg").evaluate_all(
        """els => els.map(e => [e.classList.contains('gth-msg-user') ? 'user' : 'assistant',
                                 e.querySelector('.gth-msg-content').innerText.trim()])"""
    )
    return [(str(role), str(text)) for role, text in items]


def human_messages(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in record["messages"] if m.get("type") == "human"]


def image_blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Image content blocks in the human messages the model received in one call."""
    blocks = []
    for message in human_messages(record):
        content = message.get("content")
        if isinstance(content, list):
            blocks += [
                b
                for b in content
                if isinstance(b, dict) and b.get("type") in ("image", "image_url")
            ]
    return blocks
