"""The data agent end to end on a real kernel: a scripted model calls the kernel tools, the
approvals gate asks before code runs, and a plot reaches the model as an image exactly once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.contract.events import ToolResultEvent
from gth_jupyter.contract.resume import Resume
from gth_jupyter.contract.run import RunEnd, RunPlan
from gth_jupyter.kernel import ClientAccess, KernelClient, KernelPool
from gth_jupyter.store import CheckpointStore

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

SETUP = """
import numpy as np, pandas as pd
sales = pd.DataFrame({"month": ["Jan", "Feb", "Mar"], "revenue": [10.0, None, 30.0]})
secret = "do-not-leak-7731"
"""
PLOT = (  # the fixture's kernel runs on agg; a notebook's kernel is inline already
    "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
    "agent_fig, agent_ax = plt.subplots()\nagent_ax.bar(sales['month'], sales['revenue'])\n"
    "print('plotted')\nplt.show()"
)
#: Notebook style: the figure is the last value, so the kernel sends it as the result and as a
#: display, the same bytes twice; the model and the card get it once all the same.
PLOT_LAST = PLOT.replace("plt.show()", "agent_fig")


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": name, "args": args, "id": call_id}]}


async def agent(tmp_path: Path, responses: list[Any], **config: Any) -> tuple[AgentRegistry, Path]:
    record = tmp_path / "record.jsonl"
    settings = {
        "llm": {"type": "fake", "responses": responses, "recordPath": str(record)},
        **config,
    }
    registry = AgentRegistry(
        GthConfig.model_validate(settings),
        command="notebook",
        store=CheckpointStore("memory"),
        cwd=tmp_path,
    )
    assert registry.build_error is None, registry.build_error
    return registry, record


async def run(registry: AgentRegistry, plan: RunPlan) -> tuple[list[Any], RunEnd]:
    runtime = await registry.runtime()
    items = [item async for item in runtime.stream(plan)]
    end = items[-1]
    assert isinstance(end, RunEnd)
    return items, end


def results(items: list[Any]) -> list[ToolResultEvent]:
    return [i for i in items if isinstance(i, ToolResultEvent)]


@pytest.fixture
async def access(kernel: KernelClient) -> ClientAccess:
    await kernel.execute(SETUP, shell="main")

    async def opener() -> KernelClient:
        return kernel

    return ClientAccess(opener)


async def test_variables_are_listed_and_described_with_the_configured_data_context(
    tmp_path: Path, access: ClientAccess
) -> None:
    from langchain_core.messages import HumanMessage

    responses = [
        call("list_variables", {}, "c1"),
        call("describe_variable", {"name": "sales"}, "c2"),
        call("describe_variable", {"name": "secret"}, "c3"),
        "done",
    ]
    registry, _ = await agent(
        tmp_path, responses, builtInTools={"list_variables": True, "describe_variable": {}}
    )
    items, end = await run(registry, RunPlan("t", [HumanMessage("go")], kernel=access))
    assert end.pending == []
    listed, described, secret = (json.loads(r.content) for r in results(items))
    names = [v["name"] for v in listed["variables"]]
    assert names == ["sales", "secret"]  # modules (np, pd) are left out
    frame = listed["variables"][0]
    assert frame["shape"] == [3, 2]
    import pandas as pd  # the kernel runs this venv's pandas: strings are "object" or "str"

    text_dtype = str(pd.Series(["a"]).dtype)
    assert frame["columns"] == [
        {"name": "month", "dtype": text_dtype},
        {"name": "revenue", "dtype": "float64"},
    ]
    assert listed["ranOn"] == "subshell"
    assert described["null_counts"] == {"month": 0, "revenue": 1}
    assert described["data_context"] == "sample"
    assert described["head"]["data"][0] == ["Jan", 10.0]
    assert secret["repr"] == repr("do-not-leak-7731")


async def test_data_context_schema_keeps_values_in_the_kernel(
    tmp_path: Path, access: ClientAccess
) -> None:
    from langchain_core.messages import HumanMessage

    responses = [
        call("describe_variable", {"name": "sales"}, "c1"),
        call("describe_variable", {"name": "secret"}, "c2"),
        "done",
    ]
    registry, record = await agent(
        tmp_path, responses, builtInTools={"describe_variable": {"dataContext": "schema"}}
    )
    items, _ = await run(registry, RunPlan("t", [HumanMessage("go")], kernel=access))
    frame, secret = (json.loads(r.content) for r in results(items))
    assert frame["data_context"] == "schema" and "head" not in frame and "describe" not in frame
    assert frame["columns"][1] == {"name": "revenue", "dtype": "float64"}
    assert "repr" not in secret
    assert "do-not-leak" not in record.read_text()
    assert "Jan" not in record.read_text()


@pytest.mark.parametrize("code", [PLOT, PLOT_LAST], ids=["shown", "last-value"])
async def test_run_python_asks_then_runs_and_the_plot_reaches_the_model_once(
    tmp_path: Path, access: ClientAccess, code: str
) -> None:
    from langchain_core.messages import HumanMessage

    responses = [call("run_python", {"code": code}, "c1"), "I see the bars."]
    registry, record = await agent(tmp_path, responses)
    _, end = await run(registry, RunPlan("t", [HumanMessage("plot")], kernel=access))
    (pending,) = end.pending
    assert pending.tool_name == "run_python"
    assert pending.value["code"] == code and pending.value["language"] == "python"
    assert "kernel" in pending.value["message"]

    resume = Resume({pending.id: {"approved": True}}, frozenset({"c1"}))
    items, end = await run(registry, RunPlan("t", resume=resume, kernel=access))
    assert end.pending == []
    (result,) = results(items)
    answer = json.loads(result.content)
    assert answer["status"] == "ok" and answer["stdout"] == "plotted\n"
    (image,) = answer["images"]
    assert image["mimeType"] == "image/png"
    data = image["data"]
    assert len(data) > 1000

    # The model's second call: the image once, in an image block; never in a tool message.
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    text = record.read_text()
    assert text.count(data) == 1
    last = json.dumps(requests[-1])
    assert last.count(data) == 1
    tool_messages = [m for m in requests[-1]["messages"] if m.get("type") == "tool"]
    assert all(data not in json.dumps(m) for m in tool_messages)

    # The stored thread has the bytes once too; its view puts them back into the tool card.
    runtime = await registry.runtime()
    from gth_jupyter.agui import thread_view

    view = await thread_view(runtime, "t")
    (tool,) = [m for m in view["messages"] if m["role"] == "tool"]
    (shown,) = json.loads(tool["content"])["images"]  # the card shows it once
    assert shown["data"] == data
    state = await runtime.thread_state("t")
    assert json.dumps([m.model_dump() for m in state.messages]).count(data) == 1


async def test_run_python_errors_and_edits(tmp_path: Path, access: ClientAccess) -> None:
    from langchain_core.messages import HumanMessage

    responses = [call("run_python", {"code": "1/0"}, "c1"), "ok"]
    registry, _ = await agent(tmp_path, responses)
    _, end = await run(registry, RunPlan("t", [HumanMessage("x")], kernel=access))
    (pending,) = end.pending
    edited = {"approved": True, "editedArgs": {"code": "print(len(sales))"}}
    items, _ = await run(
        registry,
        RunPlan("t", resume=Resume({pending.id: edited}, frozenset({"c1"})), kernel=access),
    )
    (result,) = results(items)
    answer = json.loads(result.content)
    assert answer["stdout"] == "3\n" and answer["status"] == "ok"
    assert "edited" in answer["userEdited"]

    responses = [call("run_python", {"code": "1/0"}, "c1"), "ok"]
    registry, _ = await agent(tmp_path, responses, approvals={"mode": "bypass"})
    items, _ = await run(registry, RunPlan("t2", [HumanMessage("x")], kernel=access))
    (result,) = results(items)
    assert result.is_error
    answer = json.loads(result.content)
    assert answer["status"] == "error" and answer["error"]["ename"] == "ZeroDivisionError"
    assert "\x1b[" not in answer["error"]["traceback"]


async def test_without_a_kernel_the_tools_say_so(tmp_path: Path) -> None:
    from langchain_core.messages import HumanMessage

    registry, _ = await agent(tmp_path, [call("list_variables", {}, "c1"), "ok"])
    items, _ = await run(registry, RunPlan("t", [HumanMessage("x")]))
    (result,) = results(items)
    assert result.is_error and json.loads(result.content)["error"] == "no_kernel"


async def test_the_pool_opens_one_client_and_refuses_unknown_kernels(
    manager: AsyncKernelManager,
) -> None:
    from jupyter_client.multikernelmanager import AsyncMultiKernelManager

    class One(AsyncMultiKernelManager):  # a server's manager holding one running kernel
        pass

    multi = One()
    multi._kernels["k1"] = manager
    pool = KernelPool(multi)
    try:
        assert pool.holds("k1") and not pool.holds("nope")
        first = await pool.client("k1")
        assert first is await pool.client("k1")
        assert first.session_id != manager.session.session
        answer = await pool.access("nope").list_variables(0, 10)
        assert answer["error"] == "kernel_not_found"
        listed = await pool.access("k1").list_variables(0, 10)
        assert listed["variables"] == [] and listed["total"] == 0
    finally:
        multi._kernels.clear()
        await pool.close()
