"""What a chat's header says about the model before any agent is built.

A ``%gth`` cell shows its widget at once, and building the agent imports LangChain and
LangGraph, which takes seconds; so :func:`configured_model` reads the model's name from the
configuration alone, unless the kernel's agent is built already and answers for itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ._host import kernel_host, server_handover

__all__ = ["ModelLabel", "configured_model"]

#: What the header shows for the offline models (the names ``describe_model`` gives them).
_OFFLINE_LABELS = {"demo": "gth-demo (offline)", "fake": "scripted"}


@dataclass(frozen=True)
class ModelLabel:
    """What a chat's header says about the model before any agent is built."""

    label: str
    offline: bool


def configured_model() -> ModelLabel | None:
    """The model the kernel's configuration names, without building it (``None``: unknown).

    A built kernel agent answers for itself. Otherwise the ``llm`` section is read from the JSON
    configuration files; a ``.gsloth.config.py`` is not run for a label (its model may be a live
    object whose package takes seconds to import), nor is a configuration that fails to load:
    the page then labels the chat from the agent's own ``info``, which it asks for anyway.
    """
    host = kernel_host()
    registry = host.built_registry()
    if registry is not None:
        info = registry.info()
        return ModelLabel(str(info.get("model") or ""), bool(info.get("offline")))
    from ...config.errors import ConfigError
    from ...config.loader import find_config_file, global_config_file

    handed = server_handover()
    if handed is not None:
        files: tuple[Path | None, ...] = handed.files
    else:
        files = (global_config_file(), find_config_file(Path.cwd()))
    if any(file is not None and file.suffix == ".py" for file in files):
        return None
    try:
        llm = host.config().llm  # read once per kernel; the agent, if ever built, uses the same
    except ConfigError:
        return None
    kind = llm.type if llm is not None else "demo"
    if kind in _OFFLINE_LABELS:
        return ModelLabel(_OFFLINE_LABELS[kind], offline=True)
    assert llm is not None
    extra = llm.model_extra or {}
    name = extra.get("modelDisplayName") or llm.model
    return ModelLabel(str(name or kind), offline=False)
