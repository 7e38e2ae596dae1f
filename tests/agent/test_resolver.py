"""The resolver: one assembly of model, tools and middleware for every host."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from gth_jupyter.agent import AgentRegistry, resolve_agent
from gth_jupyter.config import load_config
from gth_jupyter.middleware import ApprovalsMiddleware
from gth_jupyter.middleware.image_injection import FrontendImageInjectionMiddleware
from gth_jupyter.models import DemoChatModel, FakeChatModel
from gth_jupyter.store import CheckpointStore
from gth_jupyter.tools.registry import tool_name


def config_in(tmp_path: Path, data: dict[str, object]):  # type: ignore[no-untyped-def]
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(data))
    (tmp_path / "home").mkdir(exist_ok=True)
    return load_config(cwd=tmp_path, home=tmp_path / "home")


def test_no_configuration_gives_the_offline_demo_with_its_default_tools(tmp_path: Path) -> None:
    parts = resolve_agent(config_in(tmp_path, {}).for_command("notebook"), cwd=tmp_path)
    assert isinstance(parts.model, DemoChatModel) and parts.offline
    assert parts.provider == "demo"
    names = [tool_name(t) for t in parts.tools]
    assert names[-6:] == [
        "gth_checklist",
        "gth_grep",
        "show_a2ui_surface",
        *("list_variables", "describe_variable", "run_python"),  # the data agent's
    ]
    assert "read_file" in names
    assert isinstance(parts.middleware[0], ApprovalsMiddleware)


def test_the_api_command_answers_no_approvals_and_the_notebook_does(tmp_path: Path) -> None:
    config = config_in(tmp_path, {"llm": {"type": "fake", "responses": ["x"]}})
    for command, answers in (("api", False), ("notebook", True)):
        gate = resolve_agent(config.for_command(command), cwd=tmp_path).middleware[0]
        assert isinstance(gate, ApprovalsMiddleware) and gate.answers is answers


def test_named_middleware_and_image_injection_come_from_the_registry(tmp_path: Path) -> None:
    data = {
        "llm": {"type": "fake", "responses": ["x"]},
        "middleware": ["frontend-image-injection"],
        "allowedTools": ["gth_*"],
    }
    parts = resolve_agent(config_in(tmp_path, data).for_command("notebook"), cwd=tmp_path)
    assert [type(m) for m in parts.middleware] == [
        ApprovalsMiddleware,
        FrontendImageInjectionMiddleware,
    ]
    assert [tool_name(t) for t in parts.tools] == ["gth_checklist", "gth_grep"]
    assert (parts.provider, parts.model_name) == ("fake", "scripted")


def test_a_python_config_hands_over_its_live_model_and_tools(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / ".gsloth.config.py").write_text(
        textwrap.dedent(
            """
            from langchain_core.tools import tool
            from gth_jupyter.models import FakeChatModel

            @tool
            def shout(text: str) -> str:
                \"\"\"Upper-cases text.\"\"\"
                return text.upper()

            def configure():
                return {"llm": FakeChatModel(responses=["live"]), "tools": [shout]}
            """
        )
    )
    config = load_config(cwd=tmp_path, home=tmp_path / "home")
    parts = resolve_agent(config.for_command("notebook"), cwd=tmp_path)
    assert isinstance(parts.model, FakeChatModel) and parts.model.responses[0].content == "live"
    assert "shout" in [tool_name(t) for t in parts.tools]


def test_a_caller_may_replace_the_model_and_add_tools(tmp_path: Path) -> None:
    from langchain_core.tools import tool

    @tool
    def extra(x: int) -> int:
        """Returns x."""
        return x

    model = FakeChatModel(responses=["mine"])
    effective = config_in(tmp_path, {}).for_command("notebook")
    parts = resolve_agent(effective, cwd=tmp_path, model=model, extra_tools=[extra])
    assert parts.model is model and tool_name(parts.tools[-1]) == "extra"


async def test_the_registry_builds_a_runtime_from_the_parts(tmp_path: Path) -> None:
    config = config_in(tmp_path, {"llm": {"type": "fake", "responses": ["x"]}})
    registry = AgentRegistry(
        config, command="notebook", store=CheckpointStore("memory"), cwd=tmp_path
    )
    runtime = await registry.runtime("default")
    assert runtime.model is registry.model and registry.parts is not None
    assert runtime.tool_names == [tool_name(t) for t in registry.parts.tools]
    assert await registry.runtime() is runtime
