"""Building the LangGraph agent graph: model, server tools, client tools, middleware.

``create_agent`` runs each tool call as its own task, so two client tools called in one model
turn raise two interrupts at once and one id-keyed ``Command(resume=...)`` answers both.
A graph is built per set of client tools (requests may declare their own) and cached; every
graph shares one checkpointer, so a run and its resume may use different graph objects.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import NotRequired

from ..contract.run import ClientToolSpec
from ..contract.shared_state import STATE_KEY, merge_state
from ..tools.notebook_tools import is_notebook_tool, own_specs
from .client_tools import ClientToolMiddleware, is_client_tool, make_client_tool
from .model_calls import ModelCallRecorder
from .run_context import RunContextMiddleware

AgentGraph = CompiledStateGraph[Any, Any, Any, Any]
# A LangChain tool, or a provider's server tool dict (bound to the model untouched).
ToolLike = BaseTool | dict[str, Any]


class SharedState(AgentState[Any]):
    """The agent state plus the thread's shared (AG-UI) state, checkpointed with it. Writes
    are merged (:func:`~gth_jupyter.contract.shared_state.merge_state`), so tools called in parallel
    may each change a part of it."""

    gth_state: NotRequired[Annotated[dict[str, Any], merge_state]]


STATE_PROMPT = (
    "Shared state between you and the user's client (JSON; change it with the "
    "gth_update_state tool when it is available):"
)


class SharedStateMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Declares the shared state channel and shows a non-empty state to the model, in the system
    prompt of each model call (so it is always the current state, never stale history)."""

    state_schema = SharedState

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        state = request.state.get(STATE_KEY) if isinstance(request.state, dict) else None
        if state:
            extra = f"{STATE_PROMPT}\n{json.dumps(state, ensure_ascii=False, default=str)}"
            prompt = request.system_prompt
            text = f"{prompt}\n\n{extra}" if prompt else extra
            request = request.override(system_message=SystemMessage(text))
        return await handler(request)


def tool_like_name(tool: ToolLike) -> str | None:
    if isinstance(tool, BaseTool):
        return tool.name
    name = tool.get("name")
    return name if isinstance(name, str) else None


def build_graph(
    model: BaseChatModel,
    tools: Sequence[ToolLike],
    client_tools: Sequence[ClientToolSpec],
    *,
    middleware: Sequence[AgentMiddleware] = (),
    system_prompt: str | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> AgentGraph:
    """One agent graph; a client tool replaces a server tool of the same name. The notebook
    tools are suspended inside the other middleware (the approvals gate decides on them first),
    every other client tool outside it."""
    client_names = {spec.name for spec in client_tools}
    # Config tools marked ``metadata.client`` are fulfilled by the client too.
    client_names |= {t.name for t in tools if isinstance(t, BaseTool) and is_client_tool(t)}
    gated = {name for name in client_names if is_notebook_tool(name)}
    server_tools = [t for t in tools if tool_like_name(t) not in {s.name for s in client_tools}]
    all_tools = [*server_tools, *(make_client_tool(spec) for spec in client_tools)]
    graph: AgentGraph = create_agent(
        model,
        all_tools,
        system_prompt=system_prompt,
        middleware=[
            RunContextMiddleware(),
            SharedStateMiddleware(),
            ClientToolMiddleware(client_names - gated),
            *middleware,
            ClientToolMiddleware(gated, gated=True),
            # Innermost: it sees the request exactly as the model gets it.
            ModelCallRecorder(),
        ],
        # No context_schema: hosts that pass their own context (a dict, say) must still work;
        # the middleware reads a RunContext only when it is one.
        checkpointer=checkpointer,
    )
    return graph


class GraphCache:
    """Graphs keyed by the client toolset's signature (names and schemas); LRU-bounded."""

    def __init__(
        self,
        model: BaseChatModel,
        tools: Sequence[ToolLike],
        *,
        middleware: Sequence[AgentMiddleware] = (),
        system_prompt: str | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        size: int = 32,
    ) -> None:
        self._args = (model, tuple(tools))
        self._middleware = tuple(middleware)
        self._system_prompt = system_prompt
        self._checkpointer = checkpointer
        self._size = size
        self._graphs: OrderedDict[tuple[tuple[str, str], ...], AgentGraph] = OrderedDict()

    def get(self, client_tools: Sequence[ClientToolSpec] = ()) -> AgentGraph:
        client_tools = own_specs(client_tools)  # a page's notebook tool schema changes nothing
        key = tuple(sorted(spec.signature() for spec in client_tools))
        graph = self._graphs.get(key)
        if graph is None:
            model, tools = self._args
            graph = build_graph(
                model,
                tools,
                client_tools,
                middleware=self._middleware,
                system_prompt=self._system_prompt,
                checkpointer=self._checkpointer,
            )
            self._graphs[key] = graph
            if len(self._graphs) > self._size:
                self._graphs.popitem(last=False)
        else:
            self._graphs.move_to_end(key)
        return graph
