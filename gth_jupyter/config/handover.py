"""What a Jupyter server hands the kernels it starts: the configuration its agent runs with.

A kernel's agent (a headless ``%gth``, ``Session``, the comm transport) must be the server's
agent, not whatever configuration lies nearest the notebook's folder: a file an administrator
named (``--GthJupyterApp.config_file``) must govern the kernel too, and a folder the agent can
write to must not decide what the kernel runs. So the server puts, in the environment its
kernels inherit, the files it loaded (in layer order), its root directory and the settings a
kernel reads without building an agent (``jupyter``: ``savePhotos``, the headless timeout).
A kernel that finds this loads exactly those files; one with no server (nbconvert, papermill,
VS Code) finds none and looks its configuration up from its working directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gth_jupyter.config.gth_config import GthConfig

__all__ = ["HANDOVER_VAR", "Handover", "handover_env", "server_handover"]

HANDOVER_VAR = "GTH_JUPYTER_SERVER_CONFIG"


@dataclass(frozen=True)
class Handover:
    """The server's configuration as its kernels receive it."""

    files: tuple[Path, ...]
    root: Path
    jupyter: Mapping[str, Any]


def handover_env(config: GthConfig, root: Path) -> dict[str, str]:
    """The environment entry a server sets for the kernels it starts."""
    jupyter = config.jupyter.model_dump(by_alias=True, mode="json")
    value = {
        "files": [str(Path(f).resolve()) for f in config.sources],
        "root": str(root.resolve()),
        "jupyter": jupyter,
    }
    return {HANDOVER_VAR: json.dumps(value)}


def server_handover(environ: Mapping[str, str] | None = None) -> Handover | None:
    """What this kernel's server handed it, or ``None`` (no server, or an unreadable entry,
    which is treated as none: the kernel then behaves as it would without a server)."""
    text = (os.environ if environ is None else environ).get(HANDOVER_VAR)
    if not text:
        return None
    try:
        value = json.loads(text)
        files = tuple(Path(f) for f in value["files"] if isinstance(f, str))
        root = Path(value["root"])
        jupyter = value.get("jupyter") or {}
    except (ValueError, KeyError, TypeError):
        return None
    if not root.is_absolute() or not isinstance(jupyter, dict):
        return None
    return Handover(files, root, jupyter)
