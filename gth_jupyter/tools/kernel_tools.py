"""The data agent's tools: the notebook's live kernel, its variables and its code.

- ``list_variables(offset, limit)``: the user's variables, a page at a time (read-only).
- ``describe_variable(name)``: one variable's schema, statistics and a sample; how many values
  leave the kernel is ``builtInTools.describe_variable.dataContext`` (``schema`` | ``sample`` |
  ``full``, default ``sample``), so private values can stay out of the prompt (read-only).
- ``run_python(code, justification?)``: code run in the kernel as a cell would run it; an
  approvals request of its own kind (``code``). Settings: ``timeout`` in ms (default 60000).

Each answer is a JSON object (the widget draws tables and plots from it). Where the kernel is
is per run: the host puts a :class:`~gth_jupyter.contract.kernel.KernelAccess` in the run's
context (the Jupyter server for the widget's kernel, the kernel itself for the comm transport).
A run without one (a client outside a notebook) gets an error result that says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from gth_jupyter.contract.kernel import KernelAccess
from gth_jupyter.tools._base import InjectedRuntime, make_tool

__all__ = [
    "DATA_CONTEXTS",
    "DEFAULT_RUN_TIMEOUT_MS",
    "KERNEL_TOOLS",
    "make_describe_variable_tool",
    "make_list_variables_tool",
    "make_run_python_tool",
]

KERNEL_TOOLS = ("list_variables", "describe_variable", "run_python")
DATA_CONTEXTS = ("schema", "sample", "full")
DEFAULT_RUN_TIMEOUT_MS = 60_000
NO_KERNEL = (
    "no notebook kernel is attached to this conversation (the kernel tools work from a %gth "
    "chat in a notebook)"
)

LIST_DESCRIPTION = (
    "List the variables in the user's live notebook kernel: name, type, shape or length, memory "
    "size, and for DataFrames the columns with their dtypes. Modules, functions and names "
    "starting with '_' are left out. Large namespaces come in pages: pass next_offset as offset."
)
DESCRIBE_DESCRIPTION = (
    "Describe one variable of the user's live notebook kernel by its exact name: for a "
    "DataFrame or Series its schema, null counts, describe() statistics and a few rows; for an "
    "array its shape, dtype and statistics; otherwise a bounded repr. Read-only. Names that "
    "list_variables leaves out (In, Out, anything starting with '_') are refused."
)
RUN_DESCRIPTION = (
    "Run Python code in the user's live notebook kernel, as a cell would run it, and return "
    "stdout, stderr, the last expression's value, any error with its traceback, and images "
    "(a matplotlib figure shown with plt.show() comes back to you as an image). The user may "
    "have to approve the code first and can edit it. Work on the user's variables read-only "
    "unless asked to change them: name every variable you create with the prefix agent_ "
    "(agent_fig, agent_summary) so you never replace the user's names by accident, and copy a "
    "DataFrame before changing it. Keep each call short; it is interrupted after a timeout."
)


class ListArgs(BaseModel):
    offset: int = Field(default=0, ge=0, description="Where the page starts (next_offset).")
    limit: int = Field(default=50, ge=1, le=200, description="How many variables per page.")


class DescribeArgs(BaseModel):
    name: str = Field(min_length=1, max_length=200, description="The variable's exact name.")


class RunArgs(BaseModel):
    code: str = Field(min_length=1, description="The Python code to run in the kernel.")
    justification: str | None = Field(
        default=None, description="Why this code is needed (shown to whoever approves it)."
    )


def _kernel(runtime: InjectedRuntime) -> KernelAccess:
    kernel = getattr(runtime.context, "kernel", None) if runtime is not None else None
    if kernel is None:
        raise ToolException(json.dumps({"error": "no_kernel", "message": NO_KERNEL}))
    return kernel  # type: ignore[no-any-return]


def _answer(answer: dict[str, Any]) -> str:
    text = json.dumps(answer, ensure_ascii=False, default=str)
    if "error" in answer:
        raise ToolException(text)
    return text


def make_list_variables_tool() -> BaseTool:
    async def list_variables(
        offset: int = 0, limit: int = 50, runtime: InjectedRuntime = None
    ) -> str:
        return _answer(await _kernel(runtime).list_variables(offset, limit))

    return make_tool("list_variables", LIST_DESCRIPTION, ListArgs, list_variables, "read")


def data_context(settings: Mapping[str, Any]) -> str:
    """``dataContext`` of ``builtInTools.describe_variable``; refuses an unknown value."""
    value = settings.get("dataContext", settings.get("data_context", "sample"))
    if value not in DATA_CONTEXTS:
        raise ValueError(
            f"builtInTools.describe_variable.dataContext must be one of {', '.join(DATA_CONTEXTS)}"
            f", not {value!r}"
        )
    return str(value)


def make_describe_variable_tool(settings: Mapping[str, Any]) -> BaseTool:
    context = data_context(settings)

    async def describe_variable(name: str, runtime: InjectedRuntime = None) -> str:
        return _answer(await _kernel(runtime).describe_variable(name, context))

    return make_tool(
        "describe_variable",
        DESCRIBE_DESCRIPTION,
        DescribeArgs,
        describe_variable,
        "read",
        dataContext=context,
    )


def make_run_python_tool(settings: Mapping[str, Any]) -> BaseTool:
    timeout_s = float(settings.get("timeout") or DEFAULT_RUN_TIMEOUT_MS) / 1000

    async def run_python(
        code: str, justification: str | None = None, runtime: InjectedRuntime = None
    ) -> str:
        answer = await _kernel(runtime).run_python(code, timeout_s)
        if "error" in answer and "status" not in answer:
            raise ToolException(json.dumps(answer))
        text = json.dumps(answer, ensure_ascii=False, default=str)
        if answer.get("status") != "ok":
            raise ToolException(text)  # an error or a timeout: the model sees an error result
        return text

    return make_tool("run_python", RUN_DESCRIPTION, RunArgs, run_python, "code")
