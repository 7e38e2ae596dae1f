"""A real Jupyter server (pytest-jupyter) with the extension on the scripted model."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

SCRIPT: list[Any] = [
    "Hello from Jupyter.",
    {
        "content": "Checking.",
        "toolCalls": [{"name": "gth_status_update", "args": {"message": "busy"}}],
    },
    "Done.",
    {"content": "Say cheese.", "toolCalls": [{"name": "capture_image"}]},
    "A lovely photo.",
]


@pytest.fixture
def gth_script() -> list[Any]:
    return list(SCRIPT)


@pytest.fixture
def gth_checkpointer(request: pytest.FixtureRequest) -> str:
    """The extension's checkpointer: memory, unless a test asks for others with
    ``@pytest.mark.parametrize("gth_checkpointer", [...], indirect=True)``."""
    return str(getattr(request, "param", "memory"))


@pytest.fixture
def gth_database(gth_checkpointer: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A fresh database of the test PostgreSQL for the postgres checkpointer, else ``None``."""
    if gth_checkpointer != "postgres":
        yield None
        return
    from tests.services import fresh_database

    yield from fresh_database(request.getfixturevalue("pg_admin_url"))


@pytest.fixture(autouse=True)
def jp_server_cleanup(gth_database: str | None, jp_server_cleanup: None) -> None:
    """pytest-jupyter's cleanup, after ``gth_database`` is set up, so that the server stops
    (and closes its pool) before the database is dropped."""


@pytest.fixture
def gth_config(gth_script: list[Any]) -> dict[str, Any]:
    return {
        "llm": {"type": "fake", "responses": gth_script},
        "builtInTools": ["gth_status_update", "gth_checklist"],
    }


@pytest.fixture
def gth_app(gth_checkpointer: str, gth_database: str | None) -> dict[str, Any]:
    app: dict[str, Any] = {"checkpointer": gth_checkpointer}
    if gth_checkpointer == "postgres":
        # A fresh database of the test PostgreSQL (the setting, not the environment variable,
        # which the extension would take out of this test process's environment).
        app["database_url"] = gth_database
        app["run_lease_seconds"] = 5.0
    return app
