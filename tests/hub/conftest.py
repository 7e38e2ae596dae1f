"""Fixtures for the hub suite: one real JupyterHub per session with users ``a`` and ``b``, each
with a running single-user server (see ``hub_harness``).

The Hub starts when the first test needs it and stops (with everything it started) when the
session ends; its log is kept as ``test-artifacts/hub/jupyterhub.log``. Without
``tests/hub/node_modules`` (``npm ci`` here) the suite is skipped, not failed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The browser suite's harness (free ports, process trees, notebook pages) is shared.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from hub_harness import PROXY, Hub

USERS = ("a", "b")


# pytest-jupyter's autouse fixtures (loaded for tests/server) would close the event loop that
# Playwright's sync API runs on; these tests start no in-process ServerApp.
@pytest.fixture
def jp_asyncio_loop() -> None:
    return None


@pytest.fixture
def jp_server_cleanup() -> None:
    return None


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """JupyterHub with users ``a`` and ``b``, both servers running and answering
    ``gth/health`` through the proxy."""
    if not PROXY.exists():
        pytest.skip(f"{PROXY} is missing: run `npm ci` in tests/hub (scripts/setup.sh --test)")
    hub = Hub(tmp_path_factory.mktemp("jupyterhub"))
    try:
        hub.start()
        for name in USERS:
            hub.add_user(name)
        hub.spawn(USERS)
        yield hub
    except Exception:
        print(hub.log_tail())
        raise
    finally:
        hub.stop()
        hub.save_log("jupyterhub.log")
