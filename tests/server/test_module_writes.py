"""A Python file named like an installed module is code: ``pandas.py`` in a notebook's folder is
what the next ``import pandas`` in its kernel runs. The file tools write one only as
``run_python`` runs code (asked at ``manual``, ``write`` and ``assisted``), over the standalone
AG-UI endpoint with a scripted model; other files stay writes (``assisted`` runs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sse import sse_events
from tests.standalone import standalone

TOKEN = "t0ken-t0ken-t0ken"
AUTH = {"Authorization": f"token {TOKEN}"}
PLANT = "import os\nos.system('touch /tmp/owned')\n"


async def first_run(root: Path, mode: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    call = {"name": name, "args": args, "id": "call-w"}
    config = {
        "llm": {"type": "fake", "responses": [{"toolCalls": [call]}, "Done."]},
        "approvals": mode,
        "commands": {"notebook": {"filesystem": "all"}},
    }
    async with standalone(root, config, token=TOKEN) as server:
        body = {
            "threadId": "t",
            "runId": "r1",
            "protocolVersion": "1.0",
            "messages": [{"id": "u1", "role": "user", "content": "go"}],
        }
        response = await server.http.post("/agents/default/run", headers=AUTH, json=body)
        assert response.status_code == 200, response.text
        events = sse_events(response.text)
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events[-1]["outcome"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["manual", "write", "assisted"])
async def test_writing_a_module_named_like_an_installed_one_asks_as_code(
    tmp_path: Path, mode: str
) -> None:
    (tmp_path / "sub").mkdir()
    end = await first_run(tmp_path, mode, "write_file", {"path": "sub/pandas.py", "content": PLANT})
    assert end["type"] == "interrupt", end
    (asked,) = end["interrupts"]
    value = asked["metadata"]["gth"]["value"]
    assert value["code"] == PLANT and value["language"] == "python"
    assert value["codeArgument"] == "content"  # the card's Edit edits what is written
    assert "sub/pandas.py, a Python module named like an installed one" in asked["message"]
    assert not (tmp_path / "sub" / "pandas.py").exists()


async def test_moving_a_file_onto_a_modules_name_asks_too(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text(PLANT)
    args = {"source": "helper.py", "destination": "json.py"}
    end = await first_run(tmp_path, "assisted", "move_file", args)
    assert end["type"] == "interrupt", end
    assert (tmp_path / "helper.py").exists() and not (tmp_path / "json.py").exists()


async def test_other_files_are_writes_that_assisted_runs(tmp_path: Path) -> None:
    args = {"path": "analysis_helpers.py", "content": "def f():\n    return 1\n"}
    end = await first_run(tmp_path, "assisted", "write_file", args)
    assert end == {"type": "success"}, end
    assert (tmp_path / "analysis_helpers.py").read_text() == args["content"]


async def test_bypass_writes_it_unasked(tmp_path: Path) -> None:
    end = await first_run(tmp_path, "bypass", "write_file", {"path": "pandas.py", "content": "x"})
    assert end == {"type": "success"}, end
    assert (tmp_path / "pandas.py").read_text() == "x"
