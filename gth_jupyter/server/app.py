"""The Jupyter server extension: hosts the AG-UI endpoint under ``{base_url}gth/``.

The app owns the long-lived objects (the agent registry and, through it, the checkpointer):
built in ``initialize_settings``, closed in ``stop_extension``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Enum, Int, Unicode

from ..agent import AgentRegistry, CheckpointStore
from ..agui import DEFAULT_MAX_BODY_BYTES
from ..config import load_config
from ..kernel import KernelPool
from .handlers import HANDLERS
from .routes import KERNELS_KEY, MAX_BODY_KEY, REGISTRY_KEY, route_table

__all__ = ["NOTEBOOK_COMMAND", "GthJupyterApp"]

NOTEBOOK_COMMAND = "notebook"
STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


class GthJupyterApp(ExtensionApp):
    """``gth_jupyter``: the agent of the ``notebook`` command behind Jupyter's auth."""

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
    kernels: KernelPool | None = None

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
        # Our own clients of the server's kernels, for the kernel tools of each widget's run.
        manager = getattr(self.serverapp, "kernel_manager", None)
        self.kernels = KernelPool(manager) if manager is not None else None
        self.settings.update(
            {REGISTRY_KEY: self.registry, MAX_BODY_KEY: limit, KERNELS_KEY: self.kernels}
        )
        info = self.registry.info()
        self.log.info("gth-jupyter: agent ready on %s (%s)", info["model"], info["provider"])

    def initialize_handlers(self) -> None:
        self.handlers.extend(route_table(HANDLERS))

    async def stop_extension(self) -> None:
        if self.kernels is not None:
            await self.kernels.close()
        registry: Any = getattr(self, "registry", None)
        if registry is not None:
            await registry.close()
