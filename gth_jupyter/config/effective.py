"""The settings one command runs with, after Gaunt Sloth's per-command rules.

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

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from gth_jupyter.config.live import LiveObjects, is_marker
from gth_jupyter.config.schema import (
    A2aAgentConfig,
    A2uiConfig,
    AguiConfig,
    AguiProtocol,
    AiignoreConfig,
    ApprovalEntry,
    ApprovalsConfig,
    BinaryFormatConfig,
    BuiltInToolsSetting,
    CommandConfig,
    CorsConfig,
    CustomToolConfig,
    FilesystemSetting,
    GthConfig,
    LlmConfig,
    McpServerConfig,
    MiddlewareEntry,
)

__all__ = [
    "DEFAULT_BUILT_IN_TOOLS",
    "KNOWN_BUILT_IN_TOOLS",
    "EffectiveConfig",
    "built_in_tool_registry",
    "resolve",
    "unknown_built_in_tools",
]

KNOWN_BUILT_IN_TOOLS = frozenset(
    {
        "gth_checklist",
        "gth_grep",
        "gth_web_fetch",
        "gth_status_update",
        "gth_update_state",
        "show_a2ui_surface",
        "run_tests",
        "run_lint",
        "run_build",
        "run_single_test",
        "run_shell_command",
        "list_variables",
        "describe_variable",
        "run_python",
    }
)
DEFAULT_BUILT_IN_TOOLS: tuple[str, ...] = ("gth_checklist", "gth_grep")
DEFAULT_PORT = 3000
DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024
DEFAULT_RECURSION_LIMIT = 1000

_T = TypeVar("_T")

_FILESYSTEM_DEFAULTS: dict[str, FilesystemSetting] = {
    "api": "read",
    "ask": "read",
    "chat": "read",
    "notebook": "read",
    "code": "all",
    "exec": "all",
}
_BUILT_IN_TOOL_DEFAULTS: dict[str, tuple[str, ...]] = {
    "notebook": (
        *DEFAULT_BUILT_IN_TOOLS,
        "show_a2ui_surface",
        "list_variables",
        "describe_variable",
        "run_python",
    ),
}
#: Tools a command turns on even when ``builtInTools`` does not list them (only ``false`` or
#: ``{"enabled": false}`` turns them off), as Gaunt Sloth's ``code`` does with its shell tool.
_ON_UNLESS_DISABLED: dict[str, tuple[str, ...]] = {"code": ("run_shell_command",)}


class EffectiveConfig(BaseModel):
    """What :meth:`GthConfig.for_command` resolves; every value is final (no ``None`` = inherit).

    ``built_in_tools`` maps each *enabled* tool to its settings (camelCase keys as written, without
    ``enabled``); ``middleware`` is a list of ``{"name": ..., **settings}`` dicts.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    command: str
    llm: LlmConfig | None
    filesystem: FilesystemSetting
    built_in_tools: dict[str, dict[str, Any]]
    custom_tools: dict[str, CustomToolConfig]
    allowed_tools: list[str] | None
    approvals: ApprovalsConfig
    middleware: list[dict[str, Any]]
    port: int
    cors: CorsConfig
    max_body_bytes: int
    recursion_limit: int
    system_prompt: str | None
    server_tools: list[dict[str, Any]] = []
    # Live objects are left out of dumps (they are not data).
    python_tools: list[Any] = Field(default_factory=list, exclude=True)
    aiignore: AiignoreConfig = AiignoreConfig()
    a2ui: A2uiConfig = A2uiConfig()
    agui: AguiConfig = AguiConfig(protocol="auto")
    mcp_servers: dict[str, McpServerConfig] = {}
    a2a_agents: dict[str, A2aAgentConfig] = {}
    #: ``None``: not configured (no ``gth_read_binary``, no binary injection).
    binary_formats: list[BinaryFormatConfig] | None = None
    pass_env: list[str] = []
    live: LiveObjects = Field(default_factory=LiveObjects, exclude=True)


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
        live=config.live,
    )


def _binary_formats(
    setting: list[BinaryFormatConfig] | Literal[False] | None,
) -> list[BinaryFormatConfig] | None:
    """``binaryFormats``: a list of formats; ``false`` or nothing means none."""
    return list(setting) if setting else None


def built_in_tool_registry(
    setting: BuiltInToolsSetting | None, command: str
) -> dict[str, dict[str, Any]]:
    """Normalise ``builtInTools`` to ``{enabled tool: settings}``; ``None`` = the default set."""
    if setting is None:
        setting = list(_BUILT_IN_TOOL_DEFAULTS.get(command, DEFAULT_BUILT_IN_TOOLS))
    if isinstance(setting, list):
        registry: dict[str, dict[str, Any]] = {name: {} for name in setting}
        disabled: set[str] = set()
    else:
        registry, disabled = {}, set()
        for name, value in setting.items():
            if value is False or (not isinstance(value, bool) and value.enabled is False):
                disabled.add(name)
            elif value is True:
                registry[name] = {}
            elif not isinstance(value, bool):
                registry[name] = value.model_dump(
                    by_alias=True, exclude_none=True, exclude={"enabled"}
                )
    for name in _ON_UNLESS_DISABLED.get(command, ()):
        if name not in disabled:
            registry.setdefault(name, {})
    return registry


def unknown_built_in_tools(setting: BuiltInToolsSetting | None) -> list[str]:
    """The names in ``setting`` that are not built-in tools (Gaunt Sloth keeps and logs them)."""
    return [name for name in setting or () if name not in KNOWN_BUILT_IN_TOOLS]


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
