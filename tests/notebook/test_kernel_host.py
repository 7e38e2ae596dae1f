"""The kernel side keeps its state on one ``KernelHost``: a reset forgets all of it at once."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.notebook.headless import headless_thread_id
from gth_jupyter.notebook.host import client_tool, kernel_host, reset_kernel_host
from gth_jupyter.notebook.host.client_tools import registered_tools
from gth_jupyter.notebook.host.label import ModelLabel, configured_model
from gth_jupyter.notebook.host.turns import last_turn, next_turn
from gth_jupyter.store import CheckpointStore


@pytest.fixture
def fresh_host() -> Iterator[None]:
    reset_kernel_host()
    yield
    reset_kernel_host()  # the next test in this process starts from nothing too


def test_a_reset_forgets_what_the_kernel_kept_and_runs_the_agents_it_is_given(
    fresh_host: None,
) -> None:
    old = kernel_host()
    client_tool("roll_dice", "Roll a die.", js="async () => 6")
    turn, _ = next_turn("nb-1")
    headless = headless_thread_id()
    old_loop = old.loop()
    config = GthConfig.model_validate({"llm": {"type": "fake", "responses": ["hi"]}})
    agents = AgentRegistry(config, command="notebook", store=CheckpointStore("memory"))

    host = reset_kernel_host(agents)

    assert kernel_host() is host is not old
    assert registered_tools() == []  # the cell's browser tool went with the old host
    assert last_turn("nb-1") == "" and next_turn("nb-1")[1] == ""  # no earlier turn to wait on
    assert last_turn("nb-1") != turn
    assert headless_thread_id() != headless
    assert host.registry() is agents
    assert configured_model() == ModelLabel("scripted", offline=True)  # the agents answer
    deadline = time.monotonic() + 10
    while not old_loop.loop.is_closed() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert old_loop.loop.is_closed()  # the old host's loop thread is stopped


def test_one_host_per_process_made_on_first_use(fresh_host: None) -> None:
    host = kernel_host()
    assert kernel_host() is host
    assert host.built_registry() is None  # nothing built the agent: it stays unbuilt
