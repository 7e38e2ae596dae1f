"""``.gsloth.config.py``: configure() with live objects, layered like any other config file."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from gth_jupyter.config import ConfigError, find_config_file, load_config

PY_CONFIG = textwrap.dedent(
    """
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.tools import tool
    from gth_jupyter.models import FakeChatModel

    class Logger(AgentMiddleware):
        name = "request-logger"

    @tool
    def lookup(term: str) -> str:
        '''Look a term up.'''
        return term

    RATER = FakeChatModel(responses=['{"verdict": "safe", "reason": "ok"}'])

    def configure():
        return {
            "llm": FakeChatModel(responses=["hi"]),
            "tools": [lookup, {"type": "web_search_preview"}],
            "middleware": ["summarization", Logger()],
            "approvals": {"mode": "auto", "rater": RATER},
            "commands": {"notebook": {"builtInTools": ["gth_checklist"]}},
        }
    """
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_live_objects_are_kept_beside_the_validated_config(tmp_path: Path, home: Path) -> None:
    (tmp_path / ".gsloth.config.py").write_text(PY_CONFIG)
    assert find_config_file(tmp_path) == tmp_path / ".gsloth.config.py"
    config = load_config(cwd=tmp_path, home=home)
    assert config.llm is None and isinstance(config.live.llm, BaseChatModel)
    notebook = config.for_command("notebook")
    assert notebook.server_tools == [{"type": "web_search_preview"}]
    assert [t.name for t in notebook.python_tools] == ["lookup"]
    assert isinstance(notebook.python_tools[0], BaseTool)
    assert notebook.middleware[0] == {"name": "summarization"}
    logger = notebook.live.get(notebook.middleware[1])
    assert (
        isinstance(logger, AgentMiddleware) and notebook.middleware[1]["name"] == "request-logger"
    )
    assert notebook.approvals.mode == "auto"
    assert isinstance(notebook.live.get(notebook.approvals.rater), BaseChatModel)
    assert list(notebook.built_in_tools) == ["gth_checklist"]


def test_async_configure_and_a_gthconfig_result(tmp_path: Path, home: Path) -> None:
    (tmp_path / ".gsloth.config.py").write_text(
        textwrap.dedent(
            """
            from gth_jupyter.config import GthConfig

            async def configure():
                return GthConfig(builtInTools=["gth_web_fetch"], filesystem="all")
            """
        )
    )
    config = load_config(cwd=tmp_path, home=home)
    assert config.built_in_tools == ["gth_web_fetch"] and config.filesystem == "all"


async def test_async_configure_under_a_running_loop(tmp_path: Path, home: Path) -> None:
    (tmp_path / ".gsloth.config.py").write_text(
        "async def configure():\n    return {'systemPrompt': 'from a coroutine'}\n"
    )
    assert load_config(cwd=tmp_path, home=home).system_prompt == "from a coroutine"


def test_a_project_json_layer_replaces_a_global_live_model(tmp_path: Path, home: Path) -> None:
    (home / ".gsloth").mkdir()
    (home / ".gsloth" / ".gsloth.config.py").write_text(PY_CONFIG)
    (tmp_path / ".gsloth.config.json").write_text(
        json.dumps({"llm": {"type": "fake", "responses": ["x"]}, "approvals": {"deny": []}})
    )
    config = load_config(cwd=tmp_path, home=home)
    assert config.live.llm is None
    assert config.llm is not None and config.llm.type == "fake"
    assert config.for_command("notebook").approvals.mode == "auto"  # merged from the global


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = 1\n", "defines no configure() function"),
        ("def configure():\n    return 42\n", "configure() must return a dict or a GthConfig"),
        ("def configure():\n    raise RuntimeError('boom')\n", "RuntimeError: boom"),
        ("import not_a_module_anywhere\n", "ModuleNotFoundError"),
    ],
)
def test_errors_name_the_file(tmp_path: Path, home: Path, source: str, message: str) -> None:
    (tmp_path / ".gsloth.config.py").write_text(source)
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, home=home)
    assert message in str(caught.value) and ".gsloth.config.py" in str(caught.value)


def test_server_tools_and_aiignore_in_json(tmp_path: Path, home: Path) -> None:
    (home / ".gsloth").mkdir()
    (home / ".gsloth" / ".gsloth.config.json").write_text(
        json.dumps({"aiignore": {"patterns": ["*.pem"]}})
    )
    (tmp_path / ".gsloth.config.json").write_text(
        json.dumps(
            {
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 10}],
                "aiignore": {"patterns": ["secrets/"]},
            }
        )
    )
    effective = load_config(cwd=tmp_path, home=home).for_command("api")
    assert effective.server_tools == [
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 10}
    ]
    assert effective.aiignore.patterns == ["*.pem", "secrets/"]  # concatenated across layers
