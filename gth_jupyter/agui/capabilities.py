"""What an agent says it can do: AG-UI's ``AgentCapabilities`` (``GET gth/agents/{name}/
capabilities``), built from the agent as it runs, validated by ag-ui-protocol's own type.

AG-UI leaves how capabilities are fetched to the implementation; a client discovers from them
that the endpoint streams and can be re-attached to, which tools the server runs (and that the
client may bring its own, as browser tools), that the state comes as snapshots and deltas, that
a run can stop on an interrupt or an approval (answered with edits), that the model's reasoning
streams, that images may be sent, and whether the agent runs code (``run_python``).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any

import ag_ui.core as agui

from ..agent.runtime import Runtime

__all__ = ["agent_capabilities"]

#: Tools whose presence means the agent executes code.
CODE_TOOLS = frozenset({"run_python", "run_shell_command"})


def _tool(tool: Any) -> agui.Tool | None:
    """A server tool as AG-UI describes a tool (its JSON Schema parameters)."""
    if isinstance(tool, Mapping):  # a provider's server tool ({"type": "web_search_…"})
        name = tool.get("name") or tool.get("type")
        return agui.Tool(name=str(name), description="", parameters={}) if name else None
    name = getattr(tool, "name", None)
    if not isinstance(name, str):
        return None
    try:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        function = convert_to_openai_tool(tool)["function"]
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
    except Exception:  # a tool whose schema cannot be written: still listed, by name
        parameters = {"type": "object", "properties": {}}
    description = str(getattr(tool, "description", "") or "")
    return agui.Tool(name=name, description=description, parameters=parameters)


def _version() -> str | None:
    try:
        return metadata.version("gth-jupyter")
    except metadata.PackageNotFoundError:  # run from a source tree
        return None


def agent_capabilities(runtime: Runtime, name: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """Agent ``name``'s capabilities as JSON (camelCase), from its ``runtime`` and the
    registry's ``info`` (``GET gth/info``'s body)."""
    tools = [t for t in (_tool(tool) for tool in runtime.tools) if t is not None]
    names = {t.name for t in tools}
    mode = str((info.get("approvals") or {}).get("mode") or "assisted")
    model = info.get("model")
    capabilities = agui.AgentCapabilities(
        identity=agui.IdentityCapabilities(
            name=name,
            type="langgraph",
            provider="gth-jupyter",
            version=_version(),
            description=f"gth-jupyter's agent on {model}" if model else None,
            metadata={"llmProvider": info.get("provider"), "model": model},
        ),
        transport=agui.TransportCapabilities(
            streaming=True, resumable=True, websocket=False, http_binary=False
        ),
        tools=agui.ToolsCapabilities(
            supported=True, items=tools, parallel_calls=True, client_provided=True
        ),
        state=agui.StateCapabilities(snapshots=True, deltas=True, persistent_state=True),
        human_in_the_loop=agui.HumanInTheLoopCapabilities(
            supported=True,
            interrupts=True,
            approvals=mode != "bypass",
            approve_with_edits=True,
        ),
        reasoning=agui.ReasoningCapabilities(supported=True, streaming=True),
        multimodal=agui.MultimodalCapabilities(input=agui.MultimodalInputCapabilities(image=True)),
        execution=agui.ExecutionCapabilities(code_execution=bool(names & CODE_TOOLS)),
        custom={
            "gth": {
                "protocolVersions": ["1.0", "0.x"],
                "usage": True,
                "approvals": {"mode": mode},
            }
        },
    )
    return capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
