"""The headless Session API, as a script or a notebook cell uses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gth_jupyter import Session
from gth_jupyter.agui import ProtocolError


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / ".gsloth.config.json"
    path.write_text(json.dumps({"llm": {"type": "fake", "responses": ["First.", "Second."]}}))
    return path


def test_ask_returns_the_final_text_and_keeps_the_thread(config: Path) -> None:
    session = Session(config)
    assert session.ask("one") == "First."
    assert session.ask("two") == "Second."
    model = session.registry.model
    assert [len(call) for call in model.received] == [1, 3]  # the second call saw the history


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
