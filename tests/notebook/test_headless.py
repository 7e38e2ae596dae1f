"""Notebooks with ``%gth`` cells run headless: ``jupyter nbconvert --execute``, papermill and
nbclient, on the offline demo model, each in a real kernel.

One notebook (a chat answer, the data agent's list and plot, a photo, a ``client_tool``, an
explained failure, ``%gth`` alone and a ``%%gth {question}`` template) runs once per runner; the
tests read the saved files. The kernel is started with no ``GTH_JUPYTER_HEADLESS``: the cells must
find out by themselves that no front end renders a widget. The time limits on the agent's code
(run_python's timeout, headlessTimeoutSeconds) run on a scripted model, one notebook each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.notebook.conftest import iopub_of, kept_copy, run_in_kernel

# The notebook's DataFrame and the agent's plot (the `data` extra).
pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

BIN = Path(sys.executable).parent
DEMO = {"llm": {"type": "demo"}, "middleware": ["frontend-image-injection"]}
ALLOW_RUN_PYTHON = {
    **DEMO,
    "approvals": {"allow": [{"type": "tool", "matcher": "exact", "pattern": "run_python"}]},
}
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

SALES = """import pandas as pd
sales = pd.DataFrame({"month": ["2024-01", "2024-02", "2024-03"], "revenue": [10.0, 30.0, 20.0]})"""
DICE = """gth_jupyter.client_tool(
    "roll_dice", "Roll n dice.", {"type": "object", "properties": {"n": {"type": "integer"}}},
    js="async ({ n = 2 }) => Array.from({ length: n }, () => 6)",
)"""
PROMPTS = {
    "chat": "%gth Hello! What can you do?",
    "data": "%gth what data do I have?",
    "plot": "%gth plot revenue by month",
    "photo": "%gth Take a photo and tell me what you see.",
    "dice": "%gth Please use roll_dice with n=3.",
    "explain": "%gth --explain",
    "alone": "%gth",
    "template": "%%gth\n{question}",
}
RAN_CODE = 'print("agent_totals" in globals())'
PARAMETERS = {"tags": ["parameters"]}  # papermill injects its parameters after this cell
KERNEL = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}


def notebook(explain: bool = True) -> Any:
    cells = [
        nbformat.v4.new_code_cell(
            'question = "what data do I have?"', metadata={"tags": ["parameters"]}
        ),
        nbformat.v4.new_code_cell("%load_ext gth_jupyter\nimport gth_jupyter"),
        nbformat.v4.new_code_cell(SALES),
        nbformat.v4.new_code_cell(DICE),
        nbformat.v4.new_code_cell(PROMPTS["chat"]),
        nbformat.v4.new_code_cell(PROMPTS["data"]),
        nbformat.v4.new_code_cell(PROMPTS["plot"]),
        nbformat.v4.new_code_cell(RAN_CODE),
        nbformat.v4.new_code_cell(PROMPTS["photo"]),
        nbformat.v4.new_code_cell(PROMPTS["dice"]),
        nbformat.v4.new_code_cell(PROMPTS["alone"]),
        nbformat.v4.new_code_cell(PROMPTS["template"]),
    ]
    if explain:  # papermill stops at any error, whatever the cell's tags say
        cells += [
            # nbclient goes on past a cell tagged raises-exception.
            nbformat.v4.new_code_cell('sales["profit"]', metadata={"tags": ["raises-exception"]}),
            nbformat.v4.new_code_cell(PROMPTS["explain"]),
        ]
    return nbformat.v4.new_notebook(cells=cells, metadata=KERNEL)


def folder(root: Path, name: str, config: dict[str, Any], explain: bool = True) -> Path:
    """A notebook's folder with its configuration; HOME inside it keeps the threads apart."""
    where = root / name
    where.mkdir()
    (where / ".gsloth.config.json").write_text(json.dumps(config))
    nbformat.write(notebook(explain), where / "in.ipynb")
    return where


def kernel_env(where: Path) -> dict[str, str]:
    """No GTH_JUPYTER_HEADLESS, no VS Code: the cells must see for themselves."""
    return {"HOME": str(where), "PATH": f"{BIN}:/usr/bin:/bin", "PYTHONUNBUFFERED": "1"}


def run(args: list[str], where: Path) -> None:
    done = subprocess.run(
        args, cwd=where, env=kernel_env(where), capture_output=True, text=True, timeout=400
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The notebook run by each runner: nbconvert with the shipped approvals (run_python asks,
    so it is refused), papermill and nbclient with an ``allow`` entry for run_python. The three
    run at once, each in its folder and kernel: they mostly wait (kernels starting, the demo
    model's pace)."""
    root = tmp_path_factory.mktemp("headless")
    asked = folder(root, "nbconvert", DEMO)
    allowed = folder(root, "papermill", ALLOW_RUN_PYTHON, explain=False)
    direct = folder(root, "nbclient", ALLOW_RUN_PYTHON)

    def nbconvert() -> Any:
        run([str(BIN / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "in.ipynb",
             "--output", "out.ipynb"], asked)  # fmt: skip
        run([str(BIN / "jupyter"), "nbconvert", "--to", "html", "out.ipynb"], asked)
        return nbformat.read(asked / "out.ipynb", as_version=4)

    def papermill() -> Any:
        run([str(BIN / "papermill"), "in.ipynb", "out.ipynb", "-p", "question", "describe sales",
             "--cwd", str(allowed)], allowed)  # fmt: skip
        return nbformat.read(allowed / "out.ipynb", as_version=4)

    def nbclient() -> Any:
        from nbclient import NotebookClient

        book = nbformat.read(direct / "in.ipynb", as_version=4)
        client = NotebookClient(
            book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(direct)}}
        )
        client.execute(env=kernel_env(direct))
        return book

    runners = {"nbconvert": nbconvert, "papermill": papermill, "nbclient": nbclient}
    with ThreadPoolExecutor(len(runners)) as pool:
        jobs = {name: pool.submit(runner) for name, runner in runners.items()}
        runs: dict[str, Any] = {name: job.result() for name, job in jobs.items()}
    runs["html"] = (asked / "out.html").read_text(encoding="utf-8")
    yield runs


RUNNERS = ["nbconvert", "papermill", "nbclient"]


def outputs(book: Any, source: str) -> list[dict[str, Any]]:
    cells = [c for c in book.cells if c.cell_type == "code" and c.source == source]
    assert len(cells) == 1, source
    return list(cells[0].outputs)


def copy_of(book: Any, source: str) -> dict[str, str]:
    """The one output a %gth cell keeps: its static copy."""
    return kept_copy(outputs(book, source))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("runner", RUNNERS)
def test_each_gth_cell_keeps_its_answer_statically(executed: dict[str, Any], runner: str) -> None:
    book = executed[runner]
    for name, source in PROMPTS.items():
        if name == "alone" or (name == "explain" and runner == "papermill"):
            continue
        copy = copy_of(book, source)
        assert set(copy) == {"text/html", "text/markdown", "text/plain"}, name
        assert 'class="gth-static-copy"' in copy["text/html"], name
        for text in copy.values():
            assert "object at 0x" not in text and "GthChat" not in text, name
    assert "I'm **gth-demo**" in copy_of(book, PROMPTS["chat"])["text/plain"]
    assert "Your kernel holds" in copy_of(book, PROMPTS["data"])["text/plain"]
    # Each cell shows its own turn of the shared headless thread, once.
    data = copy_of(book, PROMPTS["data"])["text/markdown"]
    assert data.count("what data do I have?") == 1 and "Hello! What can you do?" not in data
    # %gth alone has no chat to show: a short note, no widget.
    alone = copy_of(book, PROMPTS["alone"])
    assert "no chat widget in a headless run" in alone["text/plain"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("runner", RUNNERS)
def test_no_widget_view_and_no_widget_state_is_saved(executed: dict[str, Any], runner: str) -> None:
    book = executed[runner]
    for cell in book.cells:
        for output in cell.get("outputs", []):
            assert WIDGET_VIEW not in output.get("data", {}), cell.source
    state = book.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = state.get("state", {}) if isinstance(state, dict) else {}
    ours = [m for m in models.values() if "thread_id" in m.get("state", {})]
    assert ours == []


@pytest.mark.timeout(900)
@pytest.mark.parametrize("runner", RUNNERS)
def test_browser_tools_end_with_the_no_browser_note(executed: dict[str, Any], runner: str) -> None:
    for source in (PROMPTS["photo"], PROMPTS["dice"]):
        copy = copy_of(executed[runner], source)
        for mime in ("text/plain", "text/html", "text/markdown"):
            assert "no browser is attached to this notebook run" in copy[mime], (source, mime)
    assert "capture_image" in copy_of(executed[runner], PROMPTS["photo"])["text/plain"]
    assert "roll_dice" in copy_of(executed[runner], PROMPTS["dice"])["text/plain"]


@pytest.mark.timeout(900)
def test_an_approval_that_would_ask_is_refused_and_says_how_to_allow(
    executed: dict[str, Any],
) -> None:
    book = executed["nbconvert"]
    copy = copy_of(book, PROMPTS["plot"])
    for mime in ("text/plain", "text/html"):
        assert "nobody can approve in a headless run" in copy[mime]
        assert "approvals.allow" in copy[mime] and "bypass" in copy[mime]
    assert '"pattern": "run_python"' in copy["text/plain"]
    assert "data:image/png" not in copy["text/html"]
    ran = outputs(book, RAN_CODE)
    assert "".join(o.get("text", "") for o in ran).strip() == "False"  # nothing ran


@pytest.mark.timeout(900)
@pytest.mark.parametrize("runner", ["papermill", "nbclient"])
def test_allowed_run_python_runs_on_the_waiting_main_thread_and_the_plot_is_kept(
    executed: dict[str, Any], runner: str
) -> None:
    book = executed[runner]
    copy = copy_of(book, PROMPTS["plot"])
    assert "data:image/png;base64," in copy["text/html"]
    assert "data:image/png;base64," in copy["text/markdown"]
    assert "nobody can approve" not in copy["text/plain"]
    # The code ran in the notebook's own namespace (the cell's main thread ran it).
    ran = outputs(book, RAN_CODE)
    assert "".join(o.get("text", "") for o in ran).strip() == "True"


@pytest.mark.timeout(900)
def test_papermill_parameters_reach_a_gth_template(executed: dict[str, Any]) -> None:
    template = copy_of(executed["papermill"], PROMPTS["template"])
    assert "describe sales" in template["text/markdown"]
    assert "`sales` is a DataFrame" in template["text/plain"]
    # Without the parameter, the notebook's own default is asked.
    default = copy_of(executed["nbclient"], PROMPTS["template"])
    assert "Your kernel holds" in default["text/plain"]


@pytest.mark.timeout(900)
def test_explain_carries_the_kernels_last_error_and_the_failing_cell(
    executed: dict[str, Any],
) -> None:
    copy = copy_of(executed["nbconvert"], PROMPTS["explain"])
    assert "Why did the cell above fail?" in copy["text/markdown"]
    # The question carried the failing cell and its traceback (shown escaped in the copy)...
    assert "KeyError" in copy["text/html"] and "sales[&quot;profit&quot;]" in copy["text/html"]
    # ...and the answer is about that error.
    assert "profit" in copy["text/plain"]


@pytest.mark.timeout(900)
def test_nbconvert_html_shows_the_answers(executed: dict[str, Any]) -> None:
    html = executed["html"]
    assert "Your kernel holds" in html
    assert "no browser is attached to this notebook run" in html
    assert "nobody can approve in a headless run" in html
    assert WIDGET_VIEW not in html and "object at 0x" not in html


def test_headless_forced_in_a_live_kernel_shows_the_copy_and_makes_no_widget(
    kernel: Any, tmp_path: Path
) -> None:
    """``%gth --headless`` where a front end would render the widget (the request names a
    cell, as JupyterLab's do): the turn runs in the kernel; no comm is opened."""
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(DEMO))
    reply, _ = run_in_kernel(kernel, "%load_ext gth_jupyter\nx = 1")
    assert reply["status"] == "ok"
    content = {"code": "%gth --headless what data do I have?", "silent": False}
    message = kernel.session.msg("execute_request", content, metadata={"cellId": "cell-1"})
    kernel.shell_channel.send(message)
    msg_id = message["header"]["msg_id"]
    seen = iopub_of(kernel, msg_id)
    kinds = [m["msg_type"] for m in seen]
    assert "comm_open" not in kinds and "execute_result" not in kinds, kinds
    shown = [m["content"]["data"] for m in seen if m["msg_type"] == "display_data"]
    assert len(shown) == 1 and WIDGET_VIEW not in shown[0]
    assert "Your kernel holds" in shown[0]["text/plain"]


def test_a_turn_that_outlasts_its_timeout_keeps_what_it_did_and_fails_the_cell(
    kernel: Any, tmp_path: Path
) -> None:
    """``jupyter.headlessTimeoutSeconds``: the cell stops waiting, shows the turn so far with
    why it ended, and fails, so a scheduled run reports it. The code still running on the
    main thread is interrupted (test_turn_deadline_ends_the_cell_inside_running_code…)."""
    config = {**DEMO, "approvals": "bypass", "jupyter": {"headlessTimeoutSeconds": 1}}
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(config))
    reply, _ = run_in_kernel(kernel, "%load_ext gth_jupyter")
    assert reply["status"] == "ok"
    slow = '%gth --headless Please use run_python with code="import time; time.sleep(3)"'
    msg_id = kernel.execute(slow)
    seen = iopub_of(kernel, msg_id)
    shown = [m["content"]["data"] for m in seen if m["msg_type"] == "display_data"]
    assert len(shown) == 1, [m["msg_type"] for m in seen]
    assert "no answer within 1 s" in shown[0]["text/plain"]
    assert "Calling your `run_python` tool" in shown[0]["text/plain"]  # the turn so far
    errors = [m["content"] for m in seen if m["msg_type"] == "error"]
    while (answer := kernel.get_shell_msg(timeout=60))["parent_header"]["msg_id"] != msg_id:
        pass
    # What the cell sent, for the rare run where its error does not reach iopub (three workers
    # on two cores): the message types, any stream text, and the reply.
    said = [(m["msg_type"], m["content"].get("text", "")) for m in seen]
    assert errors and "did not finish" in errors[0]["evalue"], (said, answer["content"])
    assert answer["content"]["status"] == "error"
    # The kernel is free again at once: the next cell runs.
    reply, printed = run_in_kernel(kernel, "print('next')")
    assert reply["status"] == "ok" and printed.strip() == "next"


# -- the turn's runs, in this process ------------------------------------------------------------


def test_however_a_headless_run_ends_its_thread_is_free_again() -> None:
    """A turn that finishes, one stopped by its timeout mid-answer, and one refused after the
    thread was claimed (an approval another client left waiting) each let the thread go."""
    import ag_ui.core as agui

    from gth_jupyter.agent import AgentRegistry
    from gth_jupyter.config import GthConfig
    from gth_jupyter.notebook.headless._kernel import HeadlessKernel, MainThread
    from gth_jupyter.notebook.headless.run import run_turn
    from gth_jupyter.notebook.host import reset_kernel_host
    from gth_jupyter.store import CheckpointStore

    shell = {"toolCalls": [{"name": "run_shell_command", "args": {"command": "ls"}}]}
    responses = ["Done.", {"content": "slow " * 400, "delayMs": 5}, shell]
    config = {
        "llm": {"type": "fake", "responses": responses},
        "approvals": "manual",
        "builtInTools": ["run_shell_command"],
    }
    registry = AgentRegistry(
        GthConfig.model_validate(config), command="notebook", store=CheckpointStore("memory")
    )
    host = reset_kernel_host(registry)
    try:
        loop, kernel = host.loop(), HeadlessKernel(MainThread())
        runtime = loop.run(registry.runtime("default"))

        def turn(thread: str, timeout: float) -> Any:
            work = run_turn("hi", thread=thread, agent="default", kernel=kernel, timeout=timeout)
            return loop.run(work)

        def free(thread: str) -> bool:
            return loop.run(runtime.running(thread)) is None

        assert turn("t", 30).error is None and free("t")
        stopped = turn("t", 0.5)
        assert stopped.error is not None and "no answer within" in stopped.error and free("t")

        asked = agui.RunAgentInput(
            thread_id="asked",
            run_id="other-client",
            messages=[agui.UserMessage(id="u-asked", content="list the files")],
            tools=[],
            context=[],
            state=None,
            forwarded_props=None,
        )
        loop.run(host.runs().start(runtime, asked, lambda item: None))  # waits on an approval
        refused = turn("asked", 30)
        assert refused.error is not None and "interrupt_pending" in refused.error
        assert free("asked")
    finally:
        reset_kernel_host()


# -- time limits on the agent's code -----------------------------------------------------------

LOOP = "import time\nwhile True:\n    time.sleep(0.1)"
HOLDS_THE_GIL = "import ctypes\nctypes.PyDLL(None).sleep(7)"  # libc's sleep, the GIL held
CELL_TIMEOUT = 40  # under nbconvert's 45 s: a cell still blocked then fails the test


def scripted(
    where: Path, code: str, after: str, *, run_timeout_ms: int, turn_timeout_s: float
) -> Path:
    """A configuration whose scripted model calls ``run_python`` with ``code``, then says
    ``after``; run_python allowed (as docs/notebook.md advises for headless runs). Returns the
    file the model records what it was sent in."""
    record = where / "model.jsonl"
    call = {"name": "run_python", "args": {"code": code}, "id": "call-1"}
    config = {
        "llm": {
            "type": "fake",
            "responses": [{"content": "Let me run it.", "toolCalls": [call]}, after],
            "recordPath": str(record),
        },
        "builtInTools": {"run_python": {"timeout": run_timeout_ms}},
        "approvals": ALLOW_RUN_PYTHON["approvals"],
        "jupyter": {"headlessTimeoutSeconds": turn_timeout_s},
    }
    (where / ".gsloth.config.json").write_text(json.dumps(config))
    return record


def run_cells(where: Path, prompt: str) -> tuple[dict[str, Any], float, str]:
    """Runs ``%load_ext``, the ``%gth`` cell and a cell after it with nbclient, as a scheduled
    run would; returns the ``%gth`` cell, how long it took, and what the next cell printed."""
    from datetime import datetime

    from nbclient import NotebookClient

    tagged = {"tags": ["raises-exception"]}  # a turn that did not finish fails its cell
    cells = [
        nbformat.v4.new_code_cell("%load_ext gth_jupyter"),
        nbformat.v4.new_code_cell(prompt, metadata=tagged),
        nbformat.v4.new_code_cell("print('next cell')"),
    ]
    book = nbformat.v4.new_notebook(cells=cells, metadata=KERNEL)
    NotebookClient(
        book,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(where)}},
    ).execute(env=kernel_env(where))
    cell = book.cells[1]
    timing = cell.metadata["execution"]
    took = datetime.fromisoformat(timing["shell.execute_reply"]) - datetime.fromisoformat(
        timing["iopub.execute_input"]
    )
    printed = "".join(o.get("text", "") for o in book.cells[2].outputs)
    return cell, took.total_seconds(), printed


def shown(cell: dict[str, Any]) -> dict[str, str]:
    """The static copy among a %gth cell's outputs (a failed turn adds its error)."""
    return kept_copy([o for o in cell["outputs"] if o["output_type"] == "display_data"])


def tool_results(record: Path) -> list[dict[str, Any]]:
    """The tool results the scripted model was sent, by its last call."""
    calls = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    messages = calls[-1]["messages"]
    return [json.loads(m["content"]) for m in messages if m.get("type") == "tool"]


@pytest.mark.timeout(300)
def test_run_python_timeout_interrupts_a_sleep_loop_and_the_turn_goes_on(tmp_path: Path) -> None:
    """The attack: `while True: time.sleep(0.1)` with run_python's timeout at 2 s blocked the
    headless cell until nbconvert's own cell timeout. Now the timeout interrupts it as a live
    kernel's does, the model reads a timeout result, and the turn answers."""
    record = scripted(
        tmp_path, LOOP, "The loop was stopped.", run_timeout_ms=2000, turn_timeout_s=120
    )
    cell, took, printed = run_cells(tmp_path, "%gth run the loop")
    assert took < 30, took  # agent build included; the loop alone never ended
    assert not [o for o in cell["outputs"] if o["output_type"] == "error"], cell["outputs"]
    assert "The loop was stopped." in shown(cell)["text/plain"]  # the turn went on
    (result,) = tool_results(record)
    assert result["status"] == "timeout" and result["interrupted"] is True, result
    assert "timed out after 2 s; the kernel was interrupted" in result["note"]
    assert result["error"]["ename"] == "CodeInterrupted"
    assert 2 <= result["elapsed"] < 15, result
    assert printed.strip() == "next cell"  # the kernel's main thread is free again


@pytest.mark.timeout(300)
def test_the_traceback_formatter_is_loaded_before_the_agents_code_runs(tmp_path: Path) -> None:
    """The cause of a rare failure: an interrupt re-sent while the code's first traceback was
    being formatted landed inside IPython's first ``import stack_data`` and left it half
    imported; the cell's own error at the deadline then failed to format and never reached
    the notebook. Everything that formatting imports is imported before the code runs."""
    code = "import sys\nprint('formatter loaded:', 'stack_data' in sys.modules)"
    record = scripted(tmp_path, code, "Checked.", run_timeout_ms=20_000, turn_timeout_s=120)
    cell, _took, _printed = run_cells(tmp_path, "%gth check")
    assert "Checked." in shown(cell)["text/plain"]
    (result,) = tool_results(record)
    assert "formatter loaded: True" in result["stdout"], result


@pytest.mark.timeout(300)
def test_turn_deadline_ends_the_cell_inside_running_code_and_keeps_the_turn(
    tmp_path: Path,
) -> None:
    """headlessTimeoutSeconds 5 with run_python's own timeout at 60 s: the cell ends at the
    turn's deadline, though the code is still running, with the turn so far and why."""
    scripted(tmp_path, LOOP, "Never said.", run_timeout_ms=60_000, turn_timeout_s=5)
    cell, took, printed = run_cells(tmp_path, "%gth run the loop")
    assert 5 <= took < 30, took
    copy = shown(cell)["text/plain"]
    assert "Let me run it." in copy and "Never said." not in copy  # what the turn did
    assert "no answer within 5 s (jupyter.headlessTimeoutSeconds)" in copy
    assert "still running when the turn ended" in copy and "it was interrupted" in copy
    errors = [o for o in cell["outputs"] if o["output_type"] == "error"]
    # What the cell kept, for the rare run where its error is missing (two workers, loaded).
    kept = [(o["output_type"], o.get("text", o.get("evalue", ""))) for o in cell["outputs"]]
    assert errors and "did not finish" in errors[0]["evalue"], kept
    assert printed.strip() == "next cell"


@pytest.mark.timeout(300)
def test_code_that_cannot_be_interrupted_ends_the_cell_when_it_returns_and_says_so(
    tmp_path: Path,
) -> None:
    """A C call holding the interpreter lock (libc's sleep through ctypes.PyDLL) outlives the
    turn's 3 s: nothing can interrupt it, so the cell ends as it returns, and says so."""
    scripted(tmp_path, HOLDS_THE_GIL, "Never said.", run_timeout_ms=60_000, turn_timeout_s=3)
    cell, took, printed = run_cells(tmp_path, "%gth sleep in C")
    assert 7 <= took < 30, took
    copy = shown(cell)["text/plain"]
    assert "no answer within 3 s" in copy
    assert "could not be interrupted when its time was up" in copy, copy
    assert printed.strip() == "next cell"


@pytest.mark.timeout(300)
def test_a_users_interrupt_during_the_agents_code_is_still_the_users(
    kernel: Any, tmp_path: Path
) -> None:
    """The cell's own SIGINT handler tells the watchdog's interrupts from a person's: a kernel
    interrupt while the agent's code runs stops that code with a plain KeyboardInterrupt (an
    error, not a timeout), as it did before the handler, and the turn goes on."""
    started = tmp_path / "started"
    code = f"open({str(started)!r}, 'w').close()\n{LOOP}"
    record = scripted(tmp_path, code, "You stopped it.", run_timeout_ms=60_000, turn_timeout_s=120)
    reply, _ = run_in_kernel(kernel, "%load_ext gth_jupyter")
    assert reply["status"] == "ok"
    msg_id = kernel.execute("%gth --headless run the loop")
    deadline = time.monotonic() + 60
    while not started.exists():  # the agent's code is running on the main thread
        assert time.monotonic() < deadline, "the agent's code never started"
        time.sleep(0.05)
    kernel.parent.interrupt_kernel()
    seen = iopub_of(kernel, msg_id, timeout=30)
    copy = [m["content"]["data"] for m in seen if m["msg_type"] == "display_data"]
    assert len(copy) == 1 and "You stopped it." in copy[0]["text/plain"]
    (result,) = tool_results(record)
    assert result["status"] == "error" and result["error"]["ename"] == "KeyboardInterrupt"


@pytest.mark.timeout(300)
def test_a_headless_copy_ends_with_its_cost_and_usage_prints_the_account(tmp_path: Path) -> None:
    """Issue 19: each headless cell's copy ends with its turn's line and the thread's total;
    ``%gth --usage`` prints the account as a table (per turn: prompt, model, tokens, cost)."""
    responses = [
        {"content": "First answer.", "usage": {"inputTokens": 1204, "outputTokens": 356}},
        {"content": "Second answer.", "usage": {"inputTokens": 2000, "outputTokens": 44}},
    ]
    config = {"llm": {"type": "fake", "responses": responses}}
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(config))
    cell, _took, _printed = run_cells(
        tmp_path, "%gth first question\n%gth second | question\n%gth --usage"
    )
    copies = [o["data"] for o in cell["outputs"] if o["output_type"] == "display_data"]
    first, second, table = copies
    assert "1,204 in · 356 out · $0.00" in first["text/html"]
    assert "This conversation so far: 1,204 in · 356 out · $0.00" in first["text/markdown"]
    assert "This conversation so far: 3,204 in · 400 out · $0.00" in second["text/html"]
    plain = table["text/plain"]
    assert "first question" in plain and "second | question" in plain and "scripted" in plain
    assert "3,204" in plain and "Total" in plain
    assert "second \\| question" in table["text/markdown"]  # the prompt's | escaped
    assert "<table" in table["text/html"]
