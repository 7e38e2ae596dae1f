"""Per-run inputs that reach the graph through LangGraph's runtime context.

Two things a client sends do not fit a plain graph input:

- *Context* (AG-UI ``RunAgentInput.context``): ambient facts the model should see on this run
  only, so they are added to the system prompt of each model call rather than stored in history.
- *Queued messages*: user text typed while a tool call was suspended. Appending it together with
  the resume would put it between the tool call and its result, which providers reject; so it is
  held here and added just before the next model call, after the results.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage
from langgraph.runtime import Runtime

from ..contract.run import RunContext

__all__ = ["RunContext", "RunContextMiddleware"]


def _context_text(items: list[tuple[str, str]]) -> str:
    lines = ["Context from the user's client for this request:"]
    lines += [f"- {description}: {value}" for description, value in items]
    return "\n".join(lines)


class RunContextMiddleware(AgentMiddleware[AgentState[Any], RunContext, Any]):
    """Adds queued messages before the next model call and the client context to its prompt."""

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[RunContext]
    ) -> dict[str, Any] | None:
        ctx = runtime.context
        if not isinstance(ctx, RunContext) or not ctx.queued_messages:
            return None
        queued, ctx.queued_messages = ctx.queued_messages, []
        return {"messages": queued}

    async def awrap_model_call(
        self,
        request: ModelRequest[RunContext],
        handler: Callable[[ModelRequest[RunContext]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        ctx = request.runtime.context if request.runtime is not None else None
        if isinstance(ctx, RunContext) and ctx.context:
            extra = _context_text(ctx.context)
            prompt = request.system_prompt
            text = f"{prompt}\n\n{extra}" if prompt else extra
            request = request.override(system_message=SystemMessage(text))
        return await handler(request)
