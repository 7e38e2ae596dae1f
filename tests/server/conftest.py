"""A real Jupyter server (pytest-jupyter) with the extension on the scripted model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio


@pytest_asyncio.fixture
async def jp_asyncio_loop() -> asyncio.AbstractEventLoop:
    """Serve on the loop pytest-asyncio runs the test in (pytest-jupyter makes its own)."""
    return asyncio.get_running_loop()


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
def jp_server_config(jp_root_dir: Path, gth_script: list[Any]) -> dict[str, Any]:
    config = {
        "llm": {"type": "fake", "responses": gth_script},
        "builtInTools": ["gth_status_update", "gth_checklist"],
    }
    (jp_root_dir / ".gsloth.config.json").write_text(json.dumps(config))
    return {
        "ServerApp": {"jpserver_extensions": {"gth_jupyter": True}},
        "GthJupyterApp": {"checkpointer": "memory"},
    }
