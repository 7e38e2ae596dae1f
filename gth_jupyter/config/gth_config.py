"""The whole configuration file, :class:`GthConfig`, and the settings one command runs with,
after Gaunt Sloth's per-command rules (:meth:`GthConfig.for_command`).

A command block (``commands.notebook``, ``commands.api``...) overrides the root:

- ``filesystem``: the block's value, else the command's default (``read`` for ``api``, ``ask``,
  ``chat`` and ``notebook``; ``all`` for ``code`` and ``exec``), else the root's.
- ``builtInTools``, ``allowedTools``, ``customTools``, ``middleware``: the block's value if set,
  else the root's. A ``builtInTools`` list or object *replaces* the default set
  (``gth_checklist``, ``gth_grep``; ``notebook`` adds ``show_a2ui_surface`` and the kernel tools
  ``list_variables``, ``describe_variable``, ``run_python``), so defaults a user
  still wants must be re-listed. In ``code``, ``run_shell_command`` is on unless set to false.
- ``approvals``: ``mode``, ``rater``, ``alignmentChecker``, ``raterTimeoutMs`` and ``allow``
  replace the root's; ``deny`` and ``escalate`` add to it. The mode defaults to ``assisted``.
- ``a2ui`` (``imageHosts``, the hosts whose images the widget loads at once): the block's
  object if set, else the root's; a block's list replaces the root's, it does not add to it.
- ``agui.protocol`` (the AG-UI dialect: ``auto``, ``1.0`` or ``0.x``): the block's if set,
  else the root's, else ``auto``.
- ``mcpServers``, ``a2aAgents``, ``binaryFormats``: the block's if set, else the root's (a
  block's value replaces the root's).
- ``passEnv`` (extra environment variables for the commands tools start): the block's list if
  set, else the root's, else none; a block's list replaces the root's.
- ``port``, ``cors``, ``maxBodyBytes``: from the block, else 3000, localhost:3000 CORS, 5 MiB.
- ``tools`` (root only): provider server tool dicts in ``server_tools``; the tool objects of a
  ``.gsloth.config.py`` in ``python_tools``. ``live`` carries that file's other objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, PrivateAttr

from gth_jupyter.config.effective import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PORT,
    DEFAULT_RECURSION_LIMIT,
    EffectiveConfig,
    built_in_tool_registry,
)
from gth_jupyter.config.live import LiveObjects, is_marker
from gth_jupyter.config.schema import (
    A2uiConfig,
    AguiConfig,
    AguiProtocol,
    AiignoreConfig,
    ApprovalEntry,
    ApprovalsConfig,
    BinaryFormatConfig,
    CommandConfig,
    CorsConfig,
    FilesystemSetting,
    JupyterConfig,
    LlmConfig,
    MiddlewareEntry,
    Overridable,
    PricingConfig,
)

__all__ = ["GthConfig", "resolve"]

_T = TypeVar("_T")

_FILESYSTEM_DEFAULTS: dict[str, FilesystemSetting] = {
    "api": "read",
    "ask": "read",
    "chat": "read",
    "notebook": "read",
    "code": "all",
    "exec": "all",
}


class GthConfig(Overridable):
    """The whole configuration. ``GthConfig()`` means "no config": the offline demo model."""

    llm: LlmConfig | None = None
    filesystem: FilesystemSetting = "none"
    middleware: list[str | MiddlewareEntry] = []
    commands: dict[str, CommandConfig] = {}
    recursion_limit: Annotated[int, Field(gt=0)] | None = None
    system_prompt: str | None = None
    #: Provider server tools (``{"type": "web_search_20250305", ...}``), bound to the model as
    #: written; in a ``.gsloth.config.py`` also LangChain tool objects (kept in ``live``).
    tools: list[dict[str, Any]] = []
    aiignore: AiignoreConfig | None = None
    #: How long a run's lease on its thread outlives a server that stopped renewing it (the
    #: shared postgres store), when the host sets none. The database URL itself is never read
    #: from a config file: credentials belong in the environment (see the loader's warning).
    run_lease_seconds: float = Field(default=30.0, ge=1)
    #: ``jupyter``: what ``%gth`` cells save (``savePhotos``) and how long a cell run without a
    #: front end waits (``headlessTimeoutSeconds``); root only.
    jupyter: JupyterConfig = Field(default_factory=JupyterConfig)
    #: ``pricing``: prices for models the installed price list lacks or a contract changes,
    #: keyed as ``llm`` names them (``{"anthropic": {"claude-…": {"inputPerMTok": 3.0, …}}}``);
    #: root only.
    pricing: PricingConfig = {}
    # Not part of the file: live objects from a .gsloth.config.py (a chat model, tools,
    # middleware instances), referenced from the data by markers (see live.py).
    _sources: list[Path] = PrivateAttr(default_factory=list)
    _live: LiveObjects = PrivateAttr(default_factory=LiveObjects)

    @property
    def live(self) -> LiveObjects:
        """The live objects of a ``.gsloth.config.py`` (``live.llm``: its chat model, if any)."""
        return self._live

    @property
    def sources(self) -> list[Path]:
        """The files this configuration was loaded from, lowest precedence first."""
        return list(self._sources)

    def for_command(self, name: str) -> EffectiveConfig:
        """Resolve the settings the ``name`` command runs with (see the module docstring)."""
        return resolve(self, name)


def resolve(config: GthConfig, command: str) -> EffectiveConfig:
    """Apply the per-command rules (see the module docstring) for ``command``."""
    block = config.commands.get(command) or CommandConfig()
    filesystem = block.filesystem or _FILESYSTEM_DEFAULTS.get(command) or config.filesystem
    tools = config.built_in_tools if block.built_in_tools is None else block.built_in_tools
    custom = config.custom_tools if block.custom_tools is None else block.custom_tools
    middleware = _first(block.middleware, config.middleware) or []
    return EffectiveConfig(
        command=command,
        llm=config.llm,
        filesystem=filesystem,
        built_in_tools=built_in_tool_registry(tools, command),
        custom_tools=dict(custom) if custom else {},
        allowed_tools=_first(block.allowed_tools, config.allowed_tools),
        approvals=_merge_approvals(config.approvals, block.approvals),
        middleware=[_middleware_entry(entry) for entry in middleware],
        port=block.port or DEFAULT_PORT,
        cors=block.cors or CorsConfig(),
        max_body_bytes=block.max_body_bytes or DEFAULT_MAX_BODY_BYTES,
        recursion_limit=config.recursion_limit or DEFAULT_RECURSION_LIMIT,
        system_prompt=config.system_prompt,
        server_tools=[dict(t) for t in config.tools if not is_marker(t)],
        python_tools=[
            obj for t in config.tools if is_marker(t) and (obj := config.live.get(t)) is not None
        ],
        aiignore=config.aiignore or AiignoreConfig(),
        a2ui=_first(block.a2ui, config.a2ui) or A2uiConfig(),
        agui=AguiConfig(protocol=_agui_protocol(block.agui, config.agui)),
        mcp_servers=dict(_first(block.mcp_servers, config.mcp_servers) or {}),
        a2a_agents=dict(_first(block.a2a_agents, config.a2a_agents) or {}),
        binary_formats=_binary_formats(_first(block.binary_formats, config.binary_formats)),
        pass_env=list(_first(block.pass_env, config.pass_env) or []),
        pricing=config.pricing,
        live=config.live,
    )


def _binary_formats(
    setting: list[BinaryFormatConfig] | Literal[False] | None,
) -> list[BinaryFormatConfig] | None:
    """``binaryFormats``: a list of formats; ``false`` or nothing means none."""
    return list(setting) if setting else None


def _first(value: _T | None, fallback: _T | None) -> _T | None:
    return value if value is not None else fallback


def _agui_protocol(block: AguiConfig | None, root: AguiConfig | None) -> AguiProtocol:
    if block is not None and block.protocol is not None:
        return block.protocol
    if root is not None and root.protocol is not None:
        return root.protocol
    return "auto"


def _merge_approvals(
    root: ApprovalsConfig | None, block: ApprovalsConfig | None
) -> ApprovalsConfig:
    root = root or ApprovalsConfig()
    block = block or ApprovalsConfig()
    return ApprovalsConfig(
        mode=block.mode or root.mode or "assisted",
        rater=_first(block.rater, root.rater),
        alignment_checker=_first(block.alignment_checker, root.alignment_checker),
        rater_timeout_ms=_first(block.rater_timeout_ms, root.rater_timeout_ms),
        allow=list(_first(block.allow, root.allow) or []),
        deny=_unique([*root.deny, *block.deny]),
        escalate=_unique([*root.escalate, *block.escalate]),
    )


def _unique(entries: list[ApprovalEntry]) -> list[ApprovalEntry]:
    kept: list[ApprovalEntry] = []
    for entry in entries:
        if entry not in kept:
            kept.append(entry)
    return kept


def _middleware_entry(entry: str | MiddlewareEntry) -> dict[str, Any]:
    if isinstance(entry, str):
        return {"name": entry}
    return entry.model_dump(by_alias=True)
