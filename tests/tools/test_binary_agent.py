"""``binaryFormats`` through the whole agent: the configuration alone adds ``gth_read_binary``
and its injection, and a read image reaches the scripted model once, as an image block."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from langchain_core.messages import HumanMessage

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.contract.run import RunEnd, RunPlan
from gth_jupyter.store import CheckpointStore

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


async def test_a_read_image_reaches_the_model_once(tmp_path: Path) -> None:
    (tmp_path / "pixel.png").write_bytes(PNG)
    record = tmp_path / "record.jsonl"
    call = {"name": "gth_read_binary", "args": {"path": "pixel.png"}, "id": "c1"}
    config = {
        "llm": {
            "type": "fake",
            "responses": [{"toolCalls": [call]}, "A single pixel."],
            "recordPath": str(record),
        },
        "filesystem": "read",
        "binaryFormats": [{"type": "image", "extensions": ["png"]}],
    }
    registry = AgentRegistry(
        GthConfig.model_validate(config),
        command="notebook",
        store=CheckpointStore("memory"),
        cwd=tmp_path,
    )
    assert registry.build_error is None, registry.build_error
    assert "gth_read_binary" in registry.info()["agents"][0]["tools"]
    runtime = await registry.runtime()
    items = [i async for i in runtime.stream(RunPlan("t", [HumanMessage("what is it?")]))]
    assert isinstance(items[-1], RunEnd) and items[-1].pending == []

    data = base64.b64encode(PNG).decode()
    last = json.loads(record.read_text().splitlines()[-1])
    assert json.dumps(last).count(data) == 1
    tools = [m for m in last["messages"] if m.get("type") == "tool"]
    assert tools and all(data not in json.dumps(m) for m in tools)


def test_binary_formats_false_turns_them_off_for_a_command() -> None:
    """Gaunt Sloth accepts ``binaryFormats: false``, e.g. in one command block."""
    from gth_jupyter.config import GthConfig

    config = GthConfig.model_validate(
        {
            "binaryFormats": [{"type": "image", "extensions": ["png"]}],
            "commands": {"api": {"binaryFormats": False}},
        }
    )
    assert config.for_command("notebook").binary_formats is not None
    assert config.for_command("api").binary_formats is None
