"""The headless Session API, as a script or a notebook cell uses it."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gth_jupyter import Session
from gth_jupyter.agui import ProtocolError
from gth_jupyter.notebook.host.threads import notebook_thread_id


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / ".gsloth.config.json"
    path.write_text(json.dumps({"llm": {"type": "fake", "responses": ["First.", "Second."]}}))
    return path


def test_ask_returns_the_final_text_and_keeps_the_thread(config: Path) -> None:
    session = Session(config)
    first = session.ask("one")
    assert first == "First."
    # A plain str that renders as Markdown when it is a cell's value.
    assert isinstance(first, str) and first._repr_markdown_() == "First."
    assert session.ask("two") == "Second."
    model = session.registry.model
    assert [len(call) for call in model.received] == [1, 3]  # the second call saw the history


def test_a_session_appends_unless_asked_to_branch(tmp_path: Path) -> None:
    """A session's turns append (a script's conversation); ``parent_run_id`` branches from a
    run it names, and the thread's own id from the start."""
    path = tmp_path / ".gsloth.config.json"
    path.write_text(json.dumps({"llm": {"type": "fake", "responses": ["A.", "B.", "C.", "D."]}}))
    session = Session(path)
    first = session.ask("one")
    session.ask("two")
    assert first.run_id.startswith("session-run-")
    assert session.ask("three", parent_run_id=first.run_id) == "C."
    assert session.ask("four", parent_run_id=session.thread_id) == "D."
    received = [[m.content for m in call] for call in session.registry.model.received]
    assert received[2] == ["one", "A.", "three"]  # the second turn left behind
    assert received[3] == ["four"]  # from the thread's start
    with pytest.raises(ProtocolError) as refused:
        session.ask("five", parent_run_id="no-such-run")
    assert refused.value.code == "parent_run_not_found"


def test_an_answer_and_the_session_say_what_the_turns_counted(tmp_path: Path) -> None:
    """``Answer.usage`` / ``Answer.cost`` for a run, ``Session.usage`` for the thread: the same
    account ``GET gth/threads/{id}`` gives, every branch in the total."""
    responses = [
        {"content": "A.", "usage": {"inputTokens": 100, "outputTokens": 10}},
        {"content": "B.", "usage": {"inputTokens": 200, "outputTokens": 20}},
        {"content": "C.", "usage": {"inputTokens": 300, "outputTokens": 30}},
    ]
    path = tmp_path / ".gsloth.config.json"
    path.write_text(json.dumps({"llm": {"type": "fake", "responses": responses}}))
    with Session(path) as session:
        first = session.ask("one")
        assert [(u["inputTokens"], u["outputTokens"]) for u in first.usage] == [(100, 10)]
        assert first.cost == {"usd": 0.0, "source": "offline"}
        session.ask("two")
        session.ask("three", parent_run_id=first.run_id)  # leaves "two" behind
        account = session.usage
    assert [t["runId"] for t in account["turns"]] == [first.run_id, account["turns"][1]["runId"]]
    assert [t["usage"][0]["inputTokens"] for t in account["turns"]] == [100, 300]
    (total,) = account["usage"]
    assert (total["inputTokens"], total["outputTokens"]) == (600, 60)  # "two" was spent too


def test_an_answer_shown_as_markdown_carries_no_live_html() -> None:
    """JupyterLab renders a fresh output's raw HTML: the model's answer as a cell's value must
    not become an element that runs script or loads anything."""
    from gth_jupyter.notebook.host.session import Answer

    answer = Answer('**Done** <img src=x onerror="alert(1)"> ![p](http://evil.example/x.png)')
    shown = answer._repr_markdown_()
    assert "<img" not in shown and "**Done**" in shown
    assert "![" not in shown and "evil.example" in shown  # a link to it, never a load
    assert str(answer).startswith("**Done** <img")  # print still shows what the model said


def test_ask_can_stream_to_stdout(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Session(config).ask("one", stream=True)
    assert capsys.readouterr().out == "First.\n"


async def test_aask_works_inside_a_running_loop(config: Path) -> None:
    assert await Session(config).aask("one") == "First."


def test_without_config_the_demo_model_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    session = Session()
    assert session.model_label == "gth-demo (offline)"
    session.registry.model.token_delay_ms = 0
    text = session.ask("hello")
    assert "offline" in text.lower() and ".gsloth.config.json" in text


def test_a_session_plans_like_the_hosts_and_refuses_a_prompt_while_an_approval_waits(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".gsloth.config.json"
    path.write_text(
        json.dumps(
            {
                "llm": {
                    "type": "fake",
                    "responses": [
                        {"toolCalls": [{"name": "run_shell_command", "args": {"command": "ls"}}]},
                        "never reached",
                    ],
                },
                "approvals": "manual",
                "builtInTools": ["run_shell_command"],
            }
        )
    )
    session = Session(path)
    assert session.ask("list the files") == ""  # the run stops at the approval
    with pytest.raises(ProtocolError) as info:
        session.ask("and now?")
    assert info.value.status == 409 and info.value.code == "interrupt_pending"
    assert info.value.detail["pending"][0]["toolName"] == "run_shell_command"


def test_outside_a_notebook_a_session_keeps_a_fresh_thread_in_memory(config: Path) -> None:
    first, second = Session(config), Session(config)
    assert first.thread_id.startswith("session-") and first.thread_id != second.thread_id
    assert first.registry.store.kind == "memory"


def test_threads_and_stores_can_be_chosen(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", "/work/analysis.ipynb")
    assert Session(config, thread="notebook").thread_id == notebook_thread_id()
    assert Session(config, thread="new").thread_id.startswith("session-")
    assert Session(config, thread="mine").thread_id == "mine"
    db = tmp_path / "threads.sqlite"
    shared = Session(config, thread="mine", checkpointer="sqlite", checkpoint_path=db)
    assert shared.ask("one") == "First."
    # Another session on the same file continues the same conversation.
    again = Session(config, thread="mine", checkpointer="sqlite", checkpoint_path=db)
    assert again.ask("two") == "First."  # a fresh scripted model, but the history is shared
    assert [len(call) for call in again.registry.model.received] == [3]
    shared.close()
    again.close()
    with pytest.raises(ValueError, match="sqlite"):
        Session(config, checkpointer="redis")  # type: ignore[arg-type]


def test_a_closed_session_lets_its_store_go(config: Path, tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    with Session(config, thread="t", checkpointer="sqlite", checkpoint_path=db) as session:
        assert session.ask("one") == "First."
    assert not session.registry.store.is_open
    with pytest.raises(RuntimeError, match="closed"):
        session.ask("two")
    dropped = Session(config, thread="t", checkpointer="sqlite", checkpoint_path=db)
    dropped.ask("one")
    store = dropped.registry.store
    del dropped  # a session dropped unclosed closes its connection all the same
    deadline = time.monotonic() + 10
    while store.is_open and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not store.is_open


KERNEL_CELL = """
from gth_jupyter import Session
from gth_jupyter.store import default_checkpoint_path
session = Session()
widget = %gth
scratch = Session(thread="new", checkpointer="memory")
print(session.thread_id == widget.thread_id, session.thread_id.startswith("nb-"))
print(session.registry.store.kind, session.registry.store.path == default_checkpoint_path())
print(scratch.thread_id.startswith("session-"), scratch.registry.store.kind)
"""


def test_in_a_notebook_a_session_talks_on_the_notebook_thread_in_the_shared_store(
    tmp_path: Path,
) -> None:
    from jupyter_client.manager import KernelManager

    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable  # this venv's Python, with gth_jupyter
    env = {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "JPY_SESSION_NAME": "/w/a.ipynb",
        "GTH_JUPYTER_HEADLESS": "0",  # the widget a live page gets (no cellId from this client)
    }
    manager.start_kernel(cwd=str(tmp_path), env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        client.execute_interactive("%load_ext gth_jupyter", timeout=60)
        printed: list[str] = []

        def output(message: dict[str, Any]) -> None:
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
            elif message["msg_type"] == "error":
                printed.append("\n".join(message["content"]["traceback"]))

        reply = client.execute_interactive(KERNEL_CELL, timeout=60, output_hook=output)
        assert reply["content"]["status"] == "ok", "".join(printed)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert "".join(printed).split() == ["True", "True", "sqlite", "True", "True", "memory"]


def test_a_session_waits_out_a_busy_thread_when_asked_to(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run All runs a Session cell while the %gth cells above it still run: it waits its turn."""
    import threading

    from gth_jupyter.notebook.host import turns
    from gth_jupyter.notebook.host.turns import next_turn
    from gth_jupyter.store import CheckpointStore

    db = tmp_path / "threads.sqlite"
    session = Session(config, thread="shared", checkpointer="sqlite", checkpoint_path=db)
    holder = CheckpointStore("sqlite", db).leases.acquire_now("shared")  # another run holds it
    assert holder is not None
    with pytest.raises(ProtocolError) as info:
        session.ask("now", wait=0)
    assert info.value.code == "run_busy"

    threading.Timer(0.6, holder.release).start()
    assert session.ask("one", wait=10) == "First."

    # A %gth turn the kernel started that no page ever sends is waited for only briefly.
    monkeypatch.setattr(turns, "APPEAR_S", 0.3)
    next_turn("shared")
    assert session.ask("two", wait=10) == "Second."
    session.close()


async def test_however_a_sessions_run_ends_its_thread_is_free_again(tmp_path: Path) -> None:
    """Cancelled mid-answer, finished, or refused after the thread was claimed (an approval
    waits): each run lets the thread go, so the next ask is never ``run_busy``."""
    import asyncio
    import io

    path = tmp_path / ".gsloth.config.json"
    shell = {"toolCalls": [{"name": "run_shell_command", "args": {"command": "ls"}}]}
    responses = [{"content": "slow " * 400, "delayMs": 5}, "Done.", shell, "never reached"]
    config = {
        "llm": {"type": "fake", "responses": responses},
        "approvals": "manual",
        "builtInTools": ["run_shell_command"],
    }
    path.write_text(json.dumps(config))
    session = Session(path)
    runtime = await session.registry.runtime("default")
    streamed = asyncio.Event()

    class Out(io.StringIO):
        def write(self, text: str) -> int:
            streamed.set()
            return len(text)

    asking = asyncio.ensure_future(session.aask("a long one", stream=Out()))
    await streamed.wait()
    asking.cancel()  # the cell was interrupted mid-answer
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert await runtime.running(session.thread_id) is None
    assert await session.aask("a short one") == "Done."
    assert await runtime.running(session.thread_id) is None
    assert await session.aask("list the files") == ""  # stops at the approval
    for _ in range(2):  # refused after the claim, and the claim let go each time
        with pytest.raises(ProtocolError) as refused:
            await session.aask("and now?")
        assert refused.value.code == "interrupt_pending"
        assert await runtime.running(session.thread_id) is None
    session.close()
