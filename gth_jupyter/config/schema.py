"""The ``.gsloth.config.json`` schema: pydantic models keyed exactly as Gaunt Sloth's files are.

Keys are camelCase in files (``builtInTools``, ``maxBodyBytes``) and snake_case in Python
(``built_in_tools``, ``max_body_bytes``); both spellings are accepted on input. Keys the schema
does not define are kept (``model_extra``) so that loading never fails on them; the loader reports
them, except inside the open objects (``llm``, custom tools, middleware and built-in tool
settings), where provider and tool options live.

These are the file's parts; :class:`~gth_jupyter.config.gth_config.GthConfig` (``gth_config.py``)
is the whole file, and resolves a command's settings from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from gth_jupyter.config.command_template import unsafe_placeholders

__all__ = [
    "A2uiConfig",
    "AguiConfig",
    "AguiProtocol",
    "AiignoreConfig",
    "ApprovalEntry",
    "ApprovalMode",
    "ApprovalsConfig",
    "BuiltInToolSettings",
    "BuiltInToolsSetting",
    "CommandConfig",
    "CorsConfig",
    "CustomToolConfig",
    "CustomToolParameter",
    "FilesystemSetting",
    "LlmConfig",
    "MiddlewareEntry",
    "Overridable",
    "iter_unknown_keys",
]

#: ``agui.protocol``: the AG-UI dialect the endpoint streams (``auto``: the request's
#: ``protocolVersion`` tells it; see ``gth_jupyter/agui/dialect.py``).
AguiProtocol = Literal["auto", "1.0", "0.x"]
ApprovalMode = Literal["manual", "write", "assisted", "auto", "bypass"]
FilesystemSetting = Literal["all", "read", "none"] | list[str]
ValidationCheck = Literal[
    "shell-injection", "directory-traversal", "absolute-paths", "null-bytes", "option-injection"
]
ApprovalHint = Literal["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
MAX_REGEXP_LENGTH = 200
#: A host name, an IPv4 address, or an IPv6 address with or without brackets.
_HOST_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|\[?[0-9a-f:.]*:[0-9a-f:.]*\]?")


class _Model(BaseModel):
    """Base: camelCase keys, snake_case attributes, unknown keys kept for the loader to report."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")
    #: True where extra keys are options passed through (not typos), so they are not reported.
    open_keys: ClassVar[bool] = False


class LlmConfig(_Model):
    """``llm``: the chat model. Provider options (``temperature``...) stay as extra keys; for
    ``type: "fake"`` so do ``responses``, ``tokenDelayMs`` and ``recordPath``."""

    open_keys = True
    type: str = Field(min_length=1)
    model: str | None = None
    api_key_environment_variable: str | None = None
    configuration: dict[str, Any] | None = None


class CorsConfig(_Model):
    """``commands.api.cors``: the CORS headers the AG-UI endpoint answers with."""

    allow_origin: str = "http://localhost:3000"
    allow_methods: str = "POST, GET, OPTIONS"
    allow_headers: str = "Content-Type, Accept"


class BuiltInToolSettings(_Model):
    """One entry of the ``builtInTools`` object registry; tool-specific options are kept."""

    open_keys = True
    enabled: bool | None = None
    command: str | None = None
    timeout: float | None = Field(default=None, gt=0)  # ms for run_shell_command
    max_output_bytes: int | None = Field(default=None, gt=0)
    max_bytes: int | None = Field(default=None, gt=0)
    file_set: Literal["gitignore", "all"] | None = None
    #: ``describe_variable``: how many of a variable's values leave the kernel.
    data_context: Literal["schema", "sample", "full"] | None = None


#: A name list enables exactly those tools; an object maps name -> true / false / settings.
BuiltInToolsSetting = list[str] | dict[str, bool | BuiltInToolSettings]


class CustomToolParameter(_Model):
    """A parameter of a custom tool: always a required string, validated unless ``allow``-ed."""

    description: str
    allow: list[ValidationCheck] | None = None


class CustomToolConfig(_Model):
    """``customTools.<name>``: a shell command the agent may run, with ``${param}`` slots."""

    open_keys = True
    command: str
    description: str
    parameters: dict[str, CustomToolParameter] | None = None
    timeout: float | None = Field(default=None, gt=0)  # seconds


class ApprovalEntry(_Model):
    """One ``allow`` / ``deny`` / ``escalate`` rule of ``approvals``."""

    type: Literal["shell", "tool", "mcpTool"]
    matcher: Literal["exact", "glob", "regexp", "hint"]
    pattern: str | dict[ApprovalHint, bool]
    server: str | None = None
    host: str | None = None
    rate: bool | None = None

    @field_validator("pattern")
    @classmethod
    def _check_pattern(
        cls, pattern: str | dict[ApprovalHint, bool], info: ValidationInfo
    ) -> str | dict[ApprovalHint, bool]:
        matcher = info.data.get("matcher")
        if matcher is None:  # the matcher itself is invalid and reported
            return pattern
        if matcher == "hint":
            if not isinstance(pattern, dict) or not pattern:
                raise ValueError("a hint pattern must be a non-empty object of hint flags")
            return pattern
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"a {matcher} pattern must be a non-empty string")
        if matcher == "regexp":
            if len(pattern) > MAX_REGEXP_LENGTH:
                raise ValueError(
                    f"regexp pattern '{pattern}' is longer than {MAX_REGEXP_LENGTH} characters"
                )
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"regexp pattern '{pattern}' does not compile: {exc}") from None
        return pattern

    @model_validator(mode="after")
    def _check_type(self) -> ApprovalEntry:
        if self.type == "shell" and (self.matcher == "hint" or self.server or self.host):
            raise ValueError("a shell entry takes an exact, glob or regexp matcher and no server")
        if self.type == "mcpTool" and not self.server:
            raise ValueError("an mcpTool entry needs 'server' (the mcpServers key)")
        if self.type == "tool" and self.server:
            raise ValueError("a tool entry takes no 'server'; use type 'mcpTool'")
        return self


class ApprovalsConfig(_Model):
    """``approvals``: a mode name, or ``{mode, rater?, allow?, deny?, escalate?, ...}``."""

    mode: ApprovalMode | None = None
    rater: str | None = None
    alignment_checker: str | None = None
    rater_timeout_ms: int | None = Field(default=None, gt=0)
    allow: list[ApprovalEntry] | None = None
    deny: list[ApprovalEntry] = []
    escalate: list[ApprovalEntry] = []

    @model_validator(mode="before")
    @classmethod
    def _from_mode_name(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value


class AiignoreConfig(_Model):
    """``aiignore``: ``patterns`` replace the ``.aiignore`` file's lines; ``enabled: false``
    turns the filter off (the working-directory boundary stays)."""

    enabled: bool | None = None
    patterns: list[str] | None = None


class A2uiConfig(_Model):
    """``a2ui``: how the widget treats what agents show. ``imageHosts`` lists the hosts whose
    images (A2UI ``Image``, Markdown images) load at once; from any other host an image waits
    for a click. Entries are host names or addresses (``cdn.example.com``, ``10.0.0.5``), a
    ``*.`` suffix (``*.example.com``: its subdomains), or ``*`` (every host)."""

    image_hosts: list[str] = []

    @field_validator("image_hosts")
    @classmethod
    def _check_hosts(cls, hosts: list[str]) -> list[str]:
        cleaned: list[str] = []
        for host in hosts:
            value = host.strip().lower().rstrip(".")
            name = value[2:] if value.startswith("*.") else value
            if value != "*" and not _HOST_NAME.fullmatch(name):
                raise ValueError(
                    f"imageHosts entry '{host}' is not a host (write 'cdn.example.com', "
                    "'*.example.com' or '*', without a scheme, port or path)"
                )
            cleaned.append(value)
        return cleaned


class AguiConfig(_Model):
    """``agui``: the AG-UI endpoint. ``protocol`` is the dialect runs stream in: ``"1.0"``,
    ``"0.x"`` (clients built on ``@ag-ui/client`` 0.0.x, such as CopilotKit's runtime 1.75), or
    ``"auto"`` (the default): 1.0 when the request says ``protocolVersion: "1.0"``, else 0.x."""

    protocol: AguiProtocol | None = None


class ProvenanceConfig(_Model):
    """``jupyter.provenance``: what a cell the agent wrote keeps of who wrote it, beside its
    turn, thread, tool call, time and source hash (``metadata.gth``). ``model: false`` records
    no model name, ``approvedBy: false`` no approver, for files shared beyond the team."""

    model: StrictBool = True
    approved_by: StrictBool = True


class JupyterConfig(_Model):
    """``jupyter`` (root only): what ``%gth`` cells keep in the notebook and how long they wait.

    ``savePhotos``: keep the photos ``capture_image`` took in the saved notebook's static copy
    (default ``false``: a placeholder says a photo was taken). ``headlessTimeoutSeconds``: how
    long a ``%gth`` cell run without a front end (nbconvert, papermill) waits for its turn.
    ``provenance``: see :class:`ProvenanceConfig`."""

    save_photos: StrictBool = False
    # strict: a string or a boolean is a mistake to report, not a number to guess
    headless_timeout_seconds: float = Field(default=600.0, gt=0, allow_inf_nan=False, strict=True)
    provenance: ProvenanceConfig = Field(default_factory=ProvenanceConfig)


class ModelPrice(BaseModel):
    """``pricing.<llm type>.<model>``: US dollars per million tokens, for a model the installed
    price list does not know, or one a contract prices differently. Strict: a price is money, so
    a typo is an error, not an extra key. ``cachedInputPerMTok`` / ``cacheWriteInputPerMTok``
    default to ``inputPerMTok``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    input_per_mtok: float = Field(alias="inputPerMTok", ge=0, allow_inf_nan=False, strict=True)
    output_per_mtok: float = Field(alias="outputPerMTok", ge=0, allow_inf_nan=False, strict=True)
    cached_input_per_mtok: float | None = Field(
        default=None, alias="cachedInputPerMTok", ge=0, allow_inf_nan=False, strict=True
    )
    cache_write_input_per_mtok: float | None = Field(
        default=None, alias="cacheWriteInputPerMTok", ge=0, allow_inf_nan=False, strict=True
    )


#: ``pricing``: ``{llm type: {model name: price}}`` (root only).
_Name = Annotated[str, Field(min_length=1)]
PricingConfig = dict[_Name, dict[_Name, ModelPrice]]


class McpServerConfig(_Model):
    """``mcpServers.<key>``: an MCP server whose tools the agent gets as ``mcp__<key>__<tool>``.

    Gaunt Sloth's shape: ``transport`` ``stdio`` (``command``, ``args``; we add ``env``) or
    ``http`` / ``sse`` (``url``, ``headers``, ``authProvider: "OAuth"``)."""

    transport: Literal["stdio", "http", "sse"]
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    auth_provider: Literal["OAuth"] | None = None

    @model_validator(mode="after")
    def _check_transport(self) -> McpServerConfig:
        if self.transport == "stdio" and not self.command:
            raise ValueError("a stdio MCP server needs a command")
        if self.transport != "stdio" and not self.url:
            raise ValueError(f"an {self.transport} MCP server needs a url")
        return self


class A2aAgentConfig(_Model):
    """``a2aAgents.<key>``: a remote A2A agent, called through the tool ``a2a_agent_<agentId>``."""

    agent_id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")
    agent_url: str = Field(min_length=1)


class BinaryFormatConfig(_Model):
    """One entry of ``binaryFormats`` (Gaunt Sloth's): which files ``gth_read_binary`` reads as
    which kind of content, and how large they may be."""

    open_keys = True
    type: Literal["image", "file", "audio", "video", "binary"]
    extensions: list[str] = []
    max_size: int | None = Field(default=None, gt=0)


class MiddlewareEntry(_Model):
    """A middleware given as an object: ``{name, ...settings}``."""

    open_keys = True
    name: str = Field(min_length=1)


class Overridable(_Model):
    """The keys a command block may override (``None`` = inherit from the root)."""

    filesystem: FilesystemSetting | None = None
    built_in_tools: BuiltInToolsSetting | None = None
    custom_tools: dict[str, CustomToolConfig] | Literal[False] | None = None
    allowed_tools: list[str] | None = None
    approvals: ApprovalsConfig | None = None
    middleware: list[str | MiddlewareEntry] | None = None
    a2ui: A2uiConfig | None = None
    agui: AguiConfig | None = None
    mcp_servers: dict[str, McpServerConfig] | None = None
    a2a_agents: dict[str, A2aAgentConfig] | None = Field(default=None, alias="a2aAgents")
    #: ``false`` (Gaunt Sloth's way to turn it off, e.g. in a command block) reads as no formats.
    binary_formats: list[BinaryFormatConfig] | Literal[False] | None = None
    #: Environment variables (names or ``*`` globs) that commands started by tools get on top of
    #: the allow-list in ``tools/process.py``; a command block's list replaces the root's.
    pass_env: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_*]+$")]] | None = None

    @field_validator("custom_tools")
    @classmethod
    def _check_placeholders(cls, tools: Any) -> Any:
        for name, tool in (tools or {}).items():
            _refuse_quoted_placeholders(f"custom tool '{name}'", tool.command, tool.parameters)
        return tools

    @field_validator("built_in_tools")
    @classmethod
    def _check_test_placeholder(cls, tools: Any) -> Any:
        single = tools.get("run_single_test") if isinstance(tools, dict) else None
        if isinstance(single, BuiltInToolSettings) and single.command:
            _refuse_quoted_placeholders("run_single_test", single.command, ["testPath"])
        return tools


def _refuse_quoted_placeholders(tool: str, command: str, names: Any) -> None:
    """Values are quoted where their ``${name}`` stands (see ``command_template.py``), which only
    works for a bare placeholder: refuse the others when the configuration loads."""
    if bad := unsafe_placeholders(command, names or ()):
        raise ValueError(
            f"the command of {tool} has ${{{bad[0]}}} inside quotes, after a backslash, in "
            "another ${...} or in a here-document; each value is passed quoted as one argument, "
            f"so write the placeholder bare (e.g. grep -e ${{{bad[0]}}} . rather than "
            f"grep '${{{bad[0]}}}' .)"
        )


class CommandConfig(Overridable):
    """``commands.<name>``. ``port``, ``cors`` and ``maxBodyBytes`` configure the HTTP endpoint
    (the ``api`` command's); :meth:`GthConfig.for_command` fills in their defaults."""

    port: int | None = Field(default=None, ge=1, le=65535)
    cors: CorsConfig | None = None
    max_body_bytes: int | None = Field(default=None, gt=0)


def iter_unknown_keys(node: object, path: tuple[str | int, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Yield the key path of every key the schema does not define, outside the open objects."""
    if isinstance(node, _Model):
        if not node.open_keys:
            for key in node.model_extra or {}:
                yield (*path, key)
        for name, field in type(node).model_fields.items():
            yield from iter_unknown_keys(getattr(node, name), (*path, field.alias or name))
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from iter_unknown_keys(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from iter_unknown_keys(value, (*path, index))
