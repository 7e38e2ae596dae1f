"""Shared helpers for the security regression tests: real config files, real tool calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gth_jupyter.config import GthConfig, load_config


def load(project: Path, config: dict[str, Any]) -> GthConfig:
    """``config`` written to ``project/.gsloth.config.json`` and loaded as a user's would be."""
    (project / ".gsloth.config.json").write_text(json.dumps(config), encoding="utf-8")
    home = project.parent / f"{project.name}-home"
    home.mkdir(exist_ok=True)
    return load_config(cwd=project, home=home)


def command_output(content: object) -> str:
    """What a command printed, out of a tool result (Gaunt Sloth's ``<COMMAND_OUTPUT>`` tags)."""
    content = str(content)
    start = content.index("<COMMAND_OUTPUT>\n") + len("<COMMAND_OUTPUT>\n")
    return content[start : content.index("</COMMAND_OUTPUT>")]
