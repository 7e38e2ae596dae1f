"""Fixtures for the browser suite: one headless Chromium per module, the Jupyter servers of
each app (JupyterLab 4, Notebook 7) from this worker's pool (a module shares the servers of the
modules before it that ask for the same configuration, see ``ServerPool``), and a fresh browser
context per test.

When a test fails, its page is saved as ``test-artifacts/browser/<test>-FAILED.png`` with the
browser console (``-console.log``), the widget's HTML (``-widget.html``), the server log written
during the test (``-server.log``) and the model calls (``-calls.jsonl``) next to it; the files of
a test's previous run are moved to ``test-artifacts/browser/previous/``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from browser_harness import (
    APPS,
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    JupyterServer,
    NotebookPage,
    ServerPool,
    module_servers,
    serving,
    slug,
    wait_stopped,
)

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Any:
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def _failed(node: pytest.Item) -> bool:
    reports = node.stash.get(_REPORTS, {})
    return any(r.failed for r in reports.values())


# pytest-jupyter's autouse fixtures (loaded for tests/server) would close the event loop that
# Playwright's sync API runs on, and clean up an in-process ServerApp these tests never start.
@pytest.fixture
def jp_asyncio_loop() -> None:
    return None


@pytest.fixture
def jp_server_cleanup() -> None:
    return None


# Per module, not per session: Playwright's sync API runs an event loop on this thread while it
# is open, which the asyncio tests a pytest-xdist worker runs after a browser module could not
# share. A launch costs about a second; a module's tests run in one worker (tests/conftest.py).
@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Playwright gives every launch a fresh, temporary user-data dir.
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser modules that share a server with another module first (the pool keeps it running
    from one to the next; the browser worker takes modules from the front), then the others
    (another worker done with its own tests takes modules from the end), each in its order."""
    users: dict[str, set[str]] = {}
    for item in items:
        module = _pool_module(item)
        for spec in (module_servers(module) or {}).values() if module else ():
            users.setdefault(spec.signature(), set()).add(module.__name__)
    shared = {m for names in users.values() if len(names) > 1 for m in names}

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("browser") is None:
            return 2
        return 0 if getattr(getattr(item, "module", None), "__name__", "") in shared else 1

    items.sort(key=rank)


def _pool_module(item: pytest.Item) -> ModuleType | None:
    """The item's module if its tests run on the pool's servers (not a module with a
    ``jupyter`` fixture of its own)."""
    module = getattr(item, "module", None)
    names = getattr(item, "fixturenames", ())
    if module is None or item.get_closest_marker("browser") is None:
        return None
    if not ("jupyter" in names or "servers" in names):
        return None
    if hasattr(module, "jupyter") and not hasattr(module, "SERVERS"):
        return None
    return module


def _pool_modules(session: pytest.Session) -> tuple[list[ModuleType], dict[str, set[str]]]:
    """The browser modules on the pool's servers (not those with a ``jupyter`` fixture of their
    own), in the order they run, and the apps each one's tests use."""
    modules: dict[str, ModuleType] = {}
    apps: dict[str, set[str]] = {}
    for item in session.items:
        module = _pool_module(item)
        if module is None:
            continue
        modules.setdefault(module.__name__, module)
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec is not None else {}
        app = params.get("jupyter", params.get("servers"))
        if app in APPS:
            apps.setdefault(module.__name__, set()).add(app)
    return list(modules.values()), apps


@pytest.fixture(scope="session")
def server_pool(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerPool]:
    modules, apps = _pool_modules(request.session)
    pool = ServerPool(tmp_path_factory.mktemp("jupyter"), modules, apps)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="session", autouse=True)
def _servers_stopped() -> Iterator[None]:
    """Servers stopping in the background (a module's own) have stopped when the worker ends."""
    yield
    wait_stopped()


@pytest.fixture(scope="module", params=APPS)
def jupyter(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    server_pool: ServerPool,
    chromium: Any,
) -> Iterator[JupyterServer]:
    """``jupyter lab`` / ``jupyter notebook`` for the module, as its names say:

    - ``SCRIPTS``: the scripted model's responses, one block per test (see the harness);
    - ``EXTRA_CONFIG``: keys over the scripted model's configuration (tools, approvals, MCP
      servers), or ``extra_config(request)`` returning them where they depend on another
      fixture (a URL: the module then has a server of its own);
    - ``CONFIG``: a whole configuration instead (the shipped demo);
    - ``CHECKPOINTER``: where threads are kept (default ``memory``).

    A module with several servers declares them as ``SERVERS`` (``ServerSpec`` by name) and
    takes them from the ``servers`` fixture instead."""
    module = request.module
    if module_servers(module) is not None:
        with server_pool.using(module, request.param) as servers:
            yield servers[""]
        return
    home = tmp_path_factory.mktemp(f"jupyter-{request.param}")
    scripts = getattr(module, "SCRIPTS", {"default": []})
    extra = module.extra_config(request)
    # Started by the first test that needs it, from that test's block of the script.
    server = JupyterServer(request.param, home, scripts, getattr(module, "CONFIG", None), extra)
    server.checkpointer = getattr(module, "CHECKPOINTER", "memory")
    with serving(server, f"{slug(module.__name__)}-{request.param}"):
        yield server


@pytest.fixture(scope="module", params=APPS)
def servers(
    request: pytest.FixtureRequest, server_pool: ServerPool, chromium: Any
) -> Iterator[dict[str, JupyterServer]]:
    """The servers of a module's ``SERVERS``, by name, for one app."""
    with server_pool.using(request.module, request.param) as servers:
        yield servers


@pytest.fixture
def notebook(
    request: pytest.FixtureRequest, chromium: Any, jupyter: JupyterServer
) -> Iterator[NotebookPage]:
    """A fresh browser context and page; diagnostics are saved when the test fails."""
    name = slug(request.node.name)
    # This test's files from an earlier run move to previous/ (one generation is kept).
    previous = ARTIFACTS / "previous"
    for old in ARTIFACTS.glob(f"{name}-*"):
        previous.mkdir(parents=True, exist_ok=True)
        old.replace(previous / old.name)
    log_start = jupyter.log_size()
    console: list[str] = []
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.on("console", lambda m: console.append(f"[{m.type}] {m.text}"))
    page.on("pageerror", lambda e: console.append(f"[pageerror] {e}"))
    page.on("requestfailed", lambda r: console.append(f"[requestfailed] {r.url} {r.failure}"))
    nb = NotebookPage(page, jupyter, name)
    try:
        yield nb
    finally:
        nb.mark("end")
        print("\n".join(f"{t:7.2f}s  {what}" for what, t in nb.timeline))
        if _failed(request.node):
            _save_diagnostics(nb, console, log_start)
        context.close()
        jupyter.shutdown_sessions()


def _save_diagnostics(nb: NotebookPage, console: list[str], log_start: int) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = ARTIFACTS / nb.name
    with contextlib.suppress(Exception):
        nb.page.screenshot(path=f"{base}-FAILED.png", full_page=True)
    with contextlib.suppress(Exception):
        html = nb.page.locator(".gth-root").evaluate_all("els => els.map(e => e.outerHTML)")
        base.with_name(f"{nb.name}-widget.html").write_text("\n\n".join(html))
    base.with_name(f"{nb.name}-console.log").write_text("\n".join(console) + "\n")
    with contextlib.suppress(OSError), nb.server.log_path.open("rb") as f:
        f.seek(log_start)
        base.with_name(f"{nb.name}-server.log").write_bytes(f.read())
    with contextlib.suppress(OSError):
        records = nb.server.record_path.read_text()
        base.with_name(f"{nb.name}-calls.jsonl").write_text(records)
