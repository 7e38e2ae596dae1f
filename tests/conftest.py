"""Shared fixtures: a runtime on the scripted model, an AG-UI run driver, an in-process Jupyter
server's configuration, the test PostgreSQL and Redis, and how pytest-xdist splits the tests
(helpers that are no fixture: ``tests/helpers.py``, ``tests/sse.py``)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from gth_jupyter.agent.runtime import Runtime
from gth_jupyter.agui.request import parse_request
from gth_jupyter.agui.run import ThreadRun
from gth_jupyter.models import FakeChatModel
from tests.helpers import browser_lanes, run_input

# A real Jupyter server for tests/server (jp_serverapp, jp_fetch).
pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture(autouse=True)
def no_server_handover(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a process no Jupyter server started: a server a test runs in this
    process hands its configuration to its kernels through the environment (handover.py)."""
    monkeypatch.setenv("GTH_JUPYTER_SERVER_CONFIG", "")


@tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


CAMERA_TOOL = {
    "name": "capture_image",
    "description": "Capture a frame from the webcam.",
    "parameters": {"type": "object", "properties": {}},
}
ASK_TOOL = {
    "name": "ask_user",
    "description": "Ask the user a question.",
    "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
}


RuntimeFactory = Callable[..., Runtime]


@pytest.fixture
def make_runtime() -> RuntimeFactory:
    def factory(responses: Sequence[Any], tools: Sequence[BaseTool] = (add,)) -> Runtime:
        model = FakeChatModel(responses=list(responses))
        return Runtime(model, list(tools), checkpointer=InMemorySaver())

    return factory


def body(thread_id: str, run_id: str, messages: str | list[dict[str, Any]], **extra: Any) -> bytes:
    """``tests.helpers.run_input`` as JSON: a run request as ``@ag-ui/client`` 1.0 sends it."""
    return json.dumps(run_input(thread_id, run_id, messages, **extra)).encode()


async def run_events(
    runtime: Runtime, payload: bytes, protocol: str = "auto"
) -> list[dict[str, Any]]:
    """One run through the AG-UI layer, as JSON events."""
    run = ThreadRun(runtime, parse_request(payload), protocol=protocol)
    await run.plan()
    return [e.model_dump(mode="json", by_alias=True, exclude_none=True) async for e in run.events()]


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in of_type(events, "TEXT_MESSAGE_CONTENT"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests first: run alone (``-n 0``) the longest report first; with pytest-xdist
    see ``pytest_xdist_make_scheduler``."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is None)


@functools.cache
def _modules_with_module_fixtures() -> frozenset[str]:
    """Test modules that set something up once for all their tests (a module-scoped fixture:
    headless notebook runs, a wheel build, a local server). Split over workers, each worker
    would set it up again."""
    root = Path(__file__).resolve().parent.parent
    return frozenset(
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if 'scope="module"' in path.read_text(encoding="utf-8")
    )


def _unit_of(nodeid: str) -> str:
    """The work unit of a test under pytest-xdist: a browser module's tests together (they
    share its Jupyter servers and Chromium), the Hub's three modules together (they share the
    Hub), a module with a module-scoped fixture together, any other test alone."""
    module = nodeid.split("::", 1)[0]
    if module.startswith("tests/hub/"):
        return "tests/hub"
    if module.startswith("tests/browser/") or module in _modules_with_module_fixtures():
        return module
    return nodeid


def _shares_a_server(unit: str) -> bool:
    return unit == "tests/hub" or unit.startswith("tests/browser/")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` (scripts/test.sh) by ``_unit_of``: the first ``browser_lanes``
    workers take the browser and Hub units, the others the rest (mostly CPU), and each takes
    from the other queue when its own is empty, from its end: a browser worker's modules share
    their servers (tests/browser/conftest.py), the modules that share one taken from the front
    first."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            wants_browser = int(node.gateway.id.removeprefix("gw")) < browser_lanes(self.numnodes)
            preferred = (u for u in self.workqueue if _shares_a_server(u) == wants_browser)
            unit = next(preferred, None)
            if unit is None and self.workqueue:
                unit = next(reversed(self.workqueue))
            if unit is not None:
                self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return Scheduling(config, log)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """A superuser URL on the real test PostgreSQL (see ``tests/services.py``)."""
    from tests.services import admin_url

    return admin_url()


@pytest.fixture
def pg_url(pg_admin_url: str) -> Iterator[str]:
    """A fresh, empty database on the test PostgreSQL for one test."""
    from tests.services import fresh_database

    yield from fresh_database(pg_admin_url)


@pytest.fixture
def redis_url() -> str:
    """The real test Redis, this worker's database of it emptied for this test."""
    import redis

    from tests.services import redis_url as url_of

    url = url_of()
    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()
    return url


# An in-process Jupyter server with the extension (pytest-jupyter's jp_serverapp, jp_fetch): a
# module says only what differs, overriding gth_config (the configuration in the server's
# root), gth_app (GthJupyterApp's settings) or gth_server_app (ServerApp's, besides the
# extension).


@pytest_asyncio.fixture
async def _test_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@pytest.fixture
def jp_asyncio_loop(request: pytest.FixtureRequest) -> Iterator[asyncio.AbstractEventLoop]:
    """A Jupyter server an async test starts (``jp_serverapp``, ``jp_configurable_serverapp``)
    serves on the loop pytest-asyncio runs the test in; any other test gets pytest-jupyter's
    loop (made, and closed after the test)."""
    server = "jp_configurable_serverapp" in request.fixturenames
    if server and inspect.iscoroutinefunction(request.function):
        yield request.getfixturevalue("_test_loop")
        return
    from jupyter_core.utils import ensure_event_loop

    loop = ensure_event_loop(prefer_selector_loop=True)
    yield loop
    loop.close()


@pytest.fixture
def gth_config() -> dict[str, Any]:
    return {"llm": {"type": "fake", "responses": ["ok"]}}


@pytest.fixture
def gth_app() -> dict[str, Any]:
    return {"checkpointer": "memory"}


@pytest.fixture
def gth_server_app() -> dict[str, Any]:
    return {}


@pytest.fixture
def jp_server_config(
    jp_root_dir: Path,
    gth_config: dict[str, Any],
    gth_app: dict[str, Any],
    gth_server_app: dict[str, Any],
) -> dict[str, Any]:
    (jp_root_dir / ".gsloth.config.json").write_text(json.dumps(gth_config))
    server_app = {"jpserver_extensions": {"gth_jupyter": True}, **gth_server_app}
    return {"ServerApp": server_app, "GthJupyterApp": gth_app}
