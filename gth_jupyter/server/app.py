"""The Jupyter server extension: hosts the AG-UI endpoint under ``{base_url}gth/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Enum, Int, Unicode

from ..agent.checkpoint import CheckpointStore
from ..agui.run import DEFAULT_MAX_BODY_BYTES
from ..config import load_config
from .agents import AgentRegistry
from .handlers import HealthHandler, InfoHandler, RunHandler, ThreadHandler
from .routes import MAX_BODY_KEY, REGISTRY_KEY

NOTEBOOK_COMMAND = "notebook"
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


class GthJupyterApp(ExtensionApp):
    name = "gth_jupyter"
    load_other_extensions = True

    config_file = Unicode(
        "",
        config=True,
        help="A .gsloth.config.json(c) to use; by default it is looked up from the server's "
        "root directory upward, over ~/.gsloth/.gsloth.config.json.",
    )
    checkpointer = Enum(
        ["sqlite", "memory"],
        default_value="sqlite",
        config=True,
        help="Where threads are kept: an SQLite file (survives restarts) or memory.",
    )
    checkpoint_path = Unicode(
        "",
        config=True,
        help="The SQLite file for threads; default: gth_jupyter/threads.sqlite in the Jupyter "
        "data directory.",
    )
    max_body_bytes = Int(
        DEFAULT_MAX_BODY_BYTES,
        config=True,
        help="Largest accepted run request, in bytes (image envelopes travel in it).",
    )

    registry: AgentRegistry

    # The widget bundle, served at {base_url}static/gth_jupyter/ and cached by the browser.
    static_paths = [str(STATIC_DIR)]  # type: ignore[assignment]

    def initialize_settings(self) -> None:
        root = Path(self.serverapp.root_dir if self.serverapp else ".").expanduser()
        config = load_config(self.config_file or None, cwd=root)
        store = CheckpointStore(self.checkpointer, self.checkpoint_path or None)
        self.registry = AgentRegistry(config, command=NOTEBOOK_COMMAND, store=store, cwd=root)
        limit = config.for_command(NOTEBOOK_COMMAND).max_body_bytes
        if self.max_body_bytes != DEFAULT_MAX_BODY_BYTES:
            limit = self.max_body_bytes
        self.settings.update({REGISTRY_KEY: self.registry, MAX_BODY_KEY: limit})
        info = self.registry.info()
        self.log.info("gth-jupyter: agent ready on %s (%s)", info["model"], info["provider"])

    def initialize_handlers(self) -> None:
        self.handlers.extend(
            [
                (r"/gth/health", HealthHandler),
                (r"/gth/info", InfoHandler),
                (r"/gth/agents/([^/]+)/run", RunHandler),
                (r"/gth/threads/([^/]+)", ThreadHandler),
            ]
        )

    async def stop_extension(self) -> None:
        registry: Any = getattr(self, "registry", None)
        if registry is not None:
            await registry.close()
