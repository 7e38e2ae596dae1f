"""The shipped notebooks (``notebooks/*.ipynb``) run headless, as CI runs them: ``jupyter
nbconvert --to notebook --execute`` on the offline demo model with their own configuration, in a
copy of the folder; their saved outputs must read as answers.

``data-agent`` runs twice: with the shipped configuration its plot is refused (``run_python``
asks, nobody can answer) and the output says how to allow it; with an ``allow`` entry for
``run_python`` the plot itself is kept. Either way its cell that fails on purpose (tagged
``raises-exception``) does not stop the run, ``%gth --explain`` explains its ``KeyError`` from the
kernel's last error, and ``%gth put that in a cell`` (no notebook to insert into) shows the code
to paste.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest

from gth_jupyter.config import _jsonc
from tests.notebook.conftest import kept_copy

pytest.importorskip("pandas")  # data-agent's sales table and its plot (the `data` extra)
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "notebooks"
BIN = Path(sys.executable).parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NO_BROWSER = "no browser is attached to this notebook run"
NO_NOTEBOOK_TOOLS = "`insert_cell` tool is only offered when the chat widget finds its notebook"
ALLOW_RUN_PYTHON = {"allow": [{"type": "tool", "matcher": "exact", "pattern": "run_python"}]}


def execute(where: Path, name: str) -> Any:
    """Runs ``name`` in ``where`` as CI does: no front end, no GTH_JUPYTER_HEADLESS."""
    env = {"HOME": str(where), "PATH": f"{BIN}:/usr/bin:/bin"}
    args = [str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute", name]
    done = subprocess.run(
        [*args, "--output", f"ran-{name}"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(where / f"ran-{name}", as_version=4)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each shipped notebook run in a copy of the folder of its own, and data-agent again with
    run_python allowed; all at once (they mostly wait on their kernels and the demo's pace)."""
    runs: dict[str, tuple[Path, str]] = {}
    for path in sorted(SHIPPED.glob("*.ipynb")):
        shipped = tmp_path_factory.mktemp(f"shipped-{path.stem}")
        shutil.copytree(SHIPPED, shipped, dirs_exist_ok=True)
        runs[path.stem] = (shipped, path.name)
    allowed = tmp_path_factory.mktemp("allowed")
    shutil.copy(SHIPPED / "data-agent.ipynb", allowed)
    config = _jsonc.loads((SHIPPED / ".gsloth.config.json").read_text(encoding="utf-8"))
    config["approvals"] = ALLOW_RUN_PYTHON
    (allowed / ".gsloth.config.json").write_text(json.dumps(config))
    runs["data-agent allowed"] = (allowed, "data-agent.ipynb")
    with ThreadPoolExecutor(len(runs)) as pool:
        jobs = {name: pool.submit(execute, *where) for name, where in runs.items()}
        return {name: job.result() for name, job in jobs.items()}


def gth_cells(book: Any) -> list[Any]:
    return [c for c in book.cells if c.cell_type == "code" and c.source.lstrip().startswith("%gth")]


def copy_of(book: Any, prompt: str) -> dict[str, str]:
    """The one output the ``%gth`` cell asking ``prompt`` keeps."""
    cells = [c for c in gth_cells(book) if prompt in c.source]
    assert len(cells) == 1, prompt
    return kept_copy(cells[0].outputs)


@pytest.mark.timeout(900)
def test_every_shipped_notebook_keeps_answers_not_widgets(ran: dict[str, Any]) -> None:
    assert {"quickstart", "data-agent", "frontend-tools"} <= set(ran)
    for name, book in ran.items():
        for cell in book.cells:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                assert WIDGET_VIEW not in data, (name, cell.source)
                assert "object at 0x" not in "".join(data.get("text/plain", "")), name
        state = book.metadata.get("widgets", {})
        assert "thread_id" not in json.dumps(state), name
        prompts = [c for c in gth_cells(book) if c.source.strip() != "%gth"]
        assert prompts, name
        for cell in prompts:
            (output,) = cell.outputs
            assert output["output_type"] == "display_data", (name, cell.source)
            plain = "".join(output["data"]["text/plain"])
            assert plain.strip() and "gave no answer" not in plain, (name, cell.source)
            assert 'class="gth-static-copy"' in "".join(output["data"]["text/html"])


@pytest.mark.timeout(900)
def test_quickstart_answers_and_the_photo_cell_says_no_browser(ran: dict[str, Any]) -> None:
    book = ran["quickstart"]
    assert "gth-demo" in copy_of(book, "Hello! What can you do?")["text/plain"]
    photo = copy_of(book, "Take a photo")
    assert NO_BROWSER in photo["text/plain"] and NO_BROWSER in photo["text/html"]
    (alone,) = [c for c in gth_cells(book) if c.source.strip() == "%gth"]
    assert "no chat widget in a headless run" in "".join(alone.outputs[0]["data"]["text/plain"])


@pytest.mark.timeout(900)
def test_data_agent_refuses_the_plot_with_the_shipped_config_and_says_how_to_allow(
    ran: dict[str, Any],
) -> None:
    book = ran["data-agent"]
    assert "Your kernel holds" in copy_of(book, "what data do I have?")["text/plain"]
    assert "`sales` is a DataFrame" in copy_of(book, "describe sales")["text/plain"]
    plot = copy_of(book, "plot revenue by month")
    assert "nobody can approve in a headless run" in plot["text/plain"]
    assert (
        '"pattern": "run_python"' in plot["text/plain"] and "approvals.allow" in plot["text/plain"]
    )
    assert "data:image/png" not in plot["text/html"]


@pytest.mark.timeout(900)
def test_data_agent_keeps_the_plot_with_an_allow_entry_for_run_python(
    ran: dict[str, Any],
) -> None:
    plot = copy_of(ran["data-agent allowed"], "plot revenue by month")
    assert "data:image/png;base64," in plot["text/html"]
    assert "nobody can approve" not in plot["text/plain"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ["data-agent", "data-agent allowed"])
def test_data_agent_explains_the_key_error_and_shows_the_code_to_paste(
    ran: dict[str, Any], name: str
) -> None:
    book = ran[name]
    (failing,) = [c for c in book.cells if "raises-exception" in c.metadata.get("tags", [])]
    (error,) = failing.outputs
    assert (error["output_type"], error["ename"]) == ("error", "KeyError"), error
    # --explain sent the kernel's last error and the failing cell's code: the demo names the
    # key, where it is looked up and the spelling the cell's comment holds.
    explained = copy_of(book, "%gth --explain")
    assert "KeyError: 'Revenue'" in explained["text/plain"], explained["text/plain"]
    assert "in `sales`" in explained["text/plain"]
    assert "use `sales['revenue']`" in explained["text/plain"]
    assert "KeyError" in explained["text/html"]
    # No notebook page to insert into: the answer says so and shows the plot's code, as
    # run_python was asked to run it (refused above, or run with the allow entry).
    pasted = copy_of(book, "put that in a cell")["text/plain"]
    assert NO_NOTEBOOK_TOOLS in pasted, pasted
    assert 'agent_totals = sales.groupby("month"' in pasted and "plt.show()" in pasted, pasted


@pytest.mark.timeout(900)
def test_frontend_tools_calls_end_with_the_no_browser_note(ran: dict[str, Any]) -> None:
    book = ran["frontend-tools"]
    for prompt in ("roll_dice with n=3", "page_title"):
        assert NO_BROWSER in copy_of(book, prompt)["text/plain"], prompt
