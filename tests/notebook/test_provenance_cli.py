"""``gth-jupyter provenance NOTEBOOK.ipynb`` (issue 20): which cells the agent wrote or edited,
in which turn, with which tool and model, approved by whom, and whether a person changed them
since (from the source hash the bridge kept, so an edit outside JupyterLab counts too);
``--json`` for tools, ``--strip`` before sharing the file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from gth_jupyter.copy.provenance import source_hash, written_cells
from gth_jupyter.server.cli import main


def marked(source: str, change: str, turn: str, **more: str) -> dict[str, Any]:
    return {
        "turnId": turn,
        "change": change,
        "threadId": "thread-1",
        "toolCallId": f"call-{turn}",
        "tool": "insert_cell" if change == "inserted" else "edit_cell",
        "at": "2026-12-07T17:00:00.000Z",
        "sourceHash": source_hash(source),
        **more,
    }


def write(tmp_path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    person = nbformat.v4.new_code_cell("import pandas as pd")
    inserted = nbformat.v4.new_code_cell("df = pd.read_csv('sales.csv')")
    inserted.metadata["gth"] = marked(inserted.source, "inserted", "turn-4", model="claude-x")
    edited = nbformat.v4.new_markdown_cell("# Sales, by month")
    # The agent wrote "# Sales"; a person changed it since (in any editor).
    edited.metadata["gth"] = marked("# Sales", "edited", "turn-5", approvedBy="alice")
    legacy = nbformat.v4.new_code_cell("df.head()")
    legacy.metadata["gth"] = {"turnId": "turn-2"}  # written before provenance
    nb.cells = [person, inserted, edited, legacy]
    path = tmp_path / "sales.ipynb"
    nbformat.write(nb, path)
    return path


def test_it_prints_who_wrote_each_cell_and_what_a_person_changed_since(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path)
    assert main(["provenance", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}: the agent wrote 3 cells, 1 edited by a person since."
    assert out[1].strip() == (
        "cell 1 (code) · inserted · turn turn-4 · by insert_cell · model claude-x · "
        "2026-12-07T17:00:00.000Z"
    )
    assert "edited by a person since" not in out[1]
    assert out[2].strip().startswith("cell 2 (markdown) · edited · turn turn-5 · by edit_cell")
    assert "approved by alice" in out[2] and out[2].endswith("edited by a person since")
    assert out[3].strip() == (
        "cell 3 (code) · inserted · turn turn-2 · no source hash: edits since cannot be told"
    )


def test_json_is_for_tools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path)
    assert main(["provenance", "--json", str(path)]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert [(c["index"], c["change"], c["editedSince"]) for c in cells] == [
        (1, "inserted", False),
        (2, "edited", True),
        (3, "inserted", None),
    ]
    first = cells[0]
    assert first["model"] == "claude-x" and first["toolCallId"] == "call-turn-4"
    assert first["cellId"] == nbformat.read(path, as_version=4).cells[1].id
    assert cells[1]["approvedBy"] == "alice" and cells[0]["approvedBy"] is None


def test_strip_removes_the_marks_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path)
    before = nbformat.read(path, as_version=4)
    # The installed command, as a person runs it.
    done = subprocess.run(
        [sys.executable, "-m", "gth_jupyter.server.cli", "provenance", "--strip", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "removed the agent's provenance from 3 cell(s)" in done.stdout
    after = nbformat.read(path, as_version=4)
    nbformat.validate(after)
    assert [c.source for c in after.cells] == [c.source for c in before.cells]
    assert [c.id for c in after.cells] == [c.id for c in before.cells]
    assert all("gth" not in c.metadata for c in after.cells)
    assert written_cells(json.loads(path.read_text())) == []
    assert main(["provenance", str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: no cell says the agent wrote it."


@pytest.mark.parametrize(
    ("content", "said"),
    [(None, "cannot read"), ("{not json", "cannot read"), ('{"cells": 3}', "is not a notebook")],
)
def test_a_file_that_is_not_a_notebook_is_said_so_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, said: str
) -> None:
    path = tmp_path / "x.ipynb"
    if content is not None:
        path.write_text(content)
    assert main(["provenance", "--strip", str(path)]) == 2
    assert said in capsys.readouterr().err
    assert (path.read_text() if content is not None else None) == content


def test_the_setting_tells_the_page_what_a_written_cell_records(tmp_path: Path) -> None:
    """``jupyter.provenance``: the widget reads it from the agent's info, and records no model
    (nor approver) where it is off."""
    from gth_jupyter.agent import AgentRegistry
    from gth_jupyter.config import GthConfig
    from gth_jupyter.config.errors import ConfigError
    from gth_jupyter.store import CheckpointStore

    def info(**jupyter: Any) -> dict[str, Any]:
        body = {"llm": {"type": "fake", "responses": ["ok"]}, "jupyter": jupyter}
        config = GthConfig.model_validate(body)
        store = CheckpointStore("memory")
        agents = AgentRegistry(config, command="notebook", store=store, cwd=tmp_path, kernels=False)
        return agents.info()

    assert info()["provenance"] == {"model": True, "approvedBy": True}
    off = info(provenance={"model": False, "approvedBy": False})
    assert off["provenance"] == {"model": False, "approvedBy": False}
    with pytest.raises((ConfigError, ValueError)):
        info(provenance={"model": "no"})  # a boolean, not a word to guess
