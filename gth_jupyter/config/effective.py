"""What one command runs with: :class:`EffectiveConfig`, every value final, as
:meth:`~gth_jupyter.config.gth_config.GthConfig.for_command` resolves it (the per-command rules are
described in ``gth_config.py``), and the built-in tools a command turns on.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gth_jupyter.config.live import LiveObjects
from gth_jupyter.config.schema import (
    A2aAgentConfig,
    A2uiConfig,
    AguiConfig,
    AiignoreConfig,
    ApprovalsConfig,
    BinaryFormatConfig,
    BuiltInToolsSetting,
    CorsConfig,
    CustomToolConfig,
    FilesystemSetting,
    LlmConfig,
    McpServerConfig,
    PricingConfig,
)

__all__ = [
    "DEFAULT_BUILT_IN_TOOLS",
    "KNOWN_BUILT_IN_TOOLS",
    "EffectiveConfig",
    "built_in_tool_registry",
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
    pricing: PricingConfig = {}
    live: LiveObjects = Field(default_factory=LiveObjects, exclude=True)


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
