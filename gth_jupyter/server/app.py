"""The Jupyter server extension: hosts the AG-UI endpoint under ``{base_url}gth/``.

The app owns the long-lived objects (the agent registry and, through it, the checkpointer):
built in ``initialize_settings``, closed in ``stop_extension``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Enum, Float, Int, List, Unicode, observe

from ..agent.registry import AgentRegistry
from ..config.effective import DEFAULT_MAX_BODY_BYTES
from ..config.handover import handover_env
from ..config.loader import load_config
from ..kernel.pool import KernelPool
from ..runs.journal import BUDGET_BYTES, USER_BUDGET_BYTES, Journals
from ..runs.journals import make_journals
from ..runs.service import RunService
from ..store.checkpoint import CheckpointStore
from ..store.postgres_env import (
    DATABASE_URL_VAR,
    REDIS_URL_VAR,
    postgres_missing,
    take_service_urls,
)
from . import handlers as jupyter_handlers
from .host import HOST_KEY, GthHost
from .identity import server_owner
from .routes import route_table
from .token import make_non_dumpable

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
        ["sqlite", "memory", "postgres"],
        default_value="sqlite",
        config=True,
        help="Where threads are kept: an SQLite file (survives restarts), memory, or a "
        "PostgreSQL database shared by many servers (see database_url).",
    )
    database_url = Unicode(
        "",
        config=True,
        help=f"The PostgreSQL URL of the postgres checkpointer; ${DATABASE_URL_VAR} takes "
        "precedence (and is the better place: a URL with a password does not belong in a "
        "config file or on a command line). Never read from .gsloth.config.json.",
    )
    redis_url = Unicode(
        "",
        config=True,
        help=f"The Redis URL for run journals shared by many servers; ${REDIS_URL_VAR} takes "
        "precedence.",
    )
    admin_users = List(
        Unicode(),
        default_value=[],
        config=True,
        help="Users who may read (never run on) every user's threads, e.g. a course's teachers "
        "on a shared server.",
    )
    run_lease_seconds = Float(
        30.0,
        config=True,
        help="How long a run's lease on its thread outlives a server that stopped renewing it "
        "(postgres); default: runLeaseSeconds of the configuration, else 30.",
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
    journal_budget_bytes = Int(
        BUDGET_BYTES,
        config=True,
        help="The most this server keeps in memory of its runs' events, for clients that "
        "re-attach (all runs together); past it the oldest finished runs' events go first.",
    )
    journal_user_budget_bytes = Int(
        USER_BUDGET_BYTES,
        config=True,
        help="The most this server keeps in memory of one user's runs' events; past it that "
        "user's oldest finished runs' events go first.",
    )

    registry: AgentRegistry
    kernels: KernelPool | None = None
    journals: Journals
    #: What the handlers reach (``self.host``), once initialized.
    host: GthHost
    #: The database and Redis URLs in effect (environment over settings), once initialized.
    database_url_resolved: str | None = None
    redis_url_resolved: str | None = None
    _lease_given = False
    _handover: dict[str, str] = {}  # replaced whole, never changed in place

    @observe("run_lease_seconds")
    def _run_lease_seconds_given(self, change: Any) -> None:
        self._lease_given = True

    # The widget bundle, served at {base_url}static/gth_jupyter/ and cached by the browser.
    static_paths = [str(STATIC_DIR)]  # type: ignore[assignment]

    def initialize_settings(self) -> None:
        self._take_service_urls()
        root = Path(self.serverapp.root_dir if self.serverapp else ".").expanduser()
        config = load_config(self.config_file or None, cwd=root)
        # The kernels this server starts inherit its environment: their agent runs with this
        # configuration, not one looked up from (or planted in) a notebook's folder.
        self._handover = handover_env(config, root)
        os.environ.update(self._handover)
        lease = self.run_lease_seconds if self._lease_given else config.run_lease_seconds
        refusal: Exception | None = None
        try:
            if self.checkpointer == "postgres":
                missing = postgres_missing()
                if missing is not None:
                    raise ValueError(missing)
            store = CheckpointStore(
                self.checkpointer,
                self.checkpoint_path or None,
                url=self.database_url_resolved,
                lease_seconds=lease,
            )
        except ValueError as exc:
            # The server still starts (the rest of Jupyter works); the agent refuses, saying why.
            self.log.error("gth-jupyter: %s", exc)
            refusal = exc
            store = CheckpointStore("memory")
        self.registry = AgentRegistry(
            config, command=NOTEBOOK_COMMAND, store=store, cwd=root, server_owner=server_owner()
        )
        if refusal is not None:
            # Refused like an agent that could not be built: /gth/info says why, runs are 503.
            self.registry.build_error = self.registry.build_error or refusal
            self.registry.parts = None
        limit = config.for_command(NOTEBOOK_COMMAND).max_body_bytes
        if self.max_body_bytes != DEFAULT_MAX_BODY_BYTES:
            limit = self.max_body_bytes
        # Our own clients of the server's kernels, for the kernel tools of each widget's run.
        manager = getattr(self.serverapp, "kernel_manager", None)
        self.kernels = KernelPool(manager) if manager is not None else None
        self.journals = make_journals(
            self.redis_url_resolved,
            server_owner(),
            budget_bytes=self.journal_budget_bytes,
            user_budget_bytes=self.journal_user_budget_bytes,
        )
        self.host = GthHost(
            self.registry,
            RunService(self.journals),
            limit,
            frozenset(self.admin_users),
            self.kernels,
        )
        self.settings[HOST_KEY] = self.host
        info = self.registry.info()
        self.log.info("gth-jupyter: agent ready on %s (%s)", info["model"], info["provider"])

    def _take_service_urls(self) -> None:
        """The URLs from the environment (else the settings), out of ``os.environ`` before
        any kernel, shell tool or MCP server starts; non-dumpable, so that a kernel of the same
        user cannot read them from ``/proc/<pid>/environ`` either."""
        found = take_service_urls()
        # Also for URLs from the settings: they live in this process's memory, which a
        # dumpable process exposes to its user's other processes (/proc/<pid>/mem).
        if found.any or self.database_url or self.redis_url:
            make_non_dumpable()
        self.database_url_resolved = found.database or self.database_url or None
        self.redis_url_resolved = found.redis or self.redis_url or None

    def initialize_handlers(self) -> None:
        self.handlers.extend(route_table(jupyter_handlers))

    async def stop_extension(self) -> None:
        for name, value in self._handover.items():
            if os.environ.get(name) == value:  # ours still: a stopped server hands nothing over
                del os.environ[name]
        host: GthHost | None = getattr(self, "host", None)
        if host is not None:
            await host.close()  # the journals, and our clients of the kernels
        registry: Any = getattr(self, "registry", None)
        if registry is not None:
            await registry.close()
