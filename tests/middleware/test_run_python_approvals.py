"""``run_python`` at the approvals gate: a code-execution request of its own kind.

``manual``, ``write`` and ``assisted`` ask the person (the code shown, Approve / Edit / Reject);
``auto`` has the rater rate the code as it rates a shell command; ``bypass`` runs. Its ``tool``
entries apply at every mode, ``deny`` at ``bypass`` too. A real graph, a stand-in kernel."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.tools import BaseTool

from gth_jupyter.config.schema import ApprovalEntry
from gth_jupyter.middleware.rater import Rater
from gth_jupyter.models import FakeChatModel
from gth_jupyter.tools.kernel_tools import make_run_python_tool
from tests.middleware.test_approvals_flow import Flow, gate

CODE = "agent_total = sales['revenue'].sum()\nagent_total"
ENTRY = {"type": "tool", "matcher": "exact", "pattern": "run_python"}


class Kernel:
    """Records the code it is given; answers as a kernel would."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run_python(self, code: str, timeout: float) -> dict[str, Any]:
        self.ran.append(code)
        return {"status": "ok", "stdout": "", "result": "42", "images": []}


def tool(kernel: Kernel) -> BaseTool:
    built = make_run_python_tool({})
    inner = built.coroutine
    assert inner is not None

    async def run_python(code: str, justification: str | None = None, runtime: Any = None) -> str:
        class Context:  # what the host puts in the run context
            pass

        holder = Context()
        holder.context = Context()  # type: ignore[attr-defined]
        holder.context.kernel = kernel  # type: ignore[attr-defined]
        return await inner(code, justification, holder)

    built.coroutine = run_python
    return built


def flow(mode: str, kernel: Kernel, **extra: Any) -> Flow:
    return Flow([tool(kernel)], gate(mode, **extra), "run_python", {"code": CODE})


def rater(verdict: str) -> tuple[Rater, FakeChatModel]:
    model = FakeChatModel(responses=[json.dumps({"verdict": verdict, "reason": "because"})])
    return Rater(model), model


@pytest.mark.parametrize("mode", ["manual", "write", "assisted"])
async def test_the_asking_modes_show_the_code_and_run_it_once_approved(mode: str) -> None:
    kernel = Kernel()
    steps = flow(mode, kernel)
    (pending,) = await steps.start()
    value = pending.value
    assert value["toolName"] == "run_python"
    assert value["code"] == CODE and value["language"] == "python" and "command" not in value
    assert value["message"] == (
        "The agent wants to run Python code in the notebook's kernel (run_python): approvals "
        f"mode '{mode}' asks you before code runs in the notebook's kernel."
    )
    assert kernel.ran == []
    message = await steps.answer({"approved": True})
    assert kernel.ran == [CODE] and json.loads(message.content)["result"] == "42"


async def test_edit_runs_the_persons_code_and_reject_runs_nothing() -> None:
    kernel = Kernel()
    steps = flow("assisted", kernel)
    await steps.start()
    message = await steps.answer({"approved": True, "editedArgs": {"code": "print(1)"}})
    assert kernel.ran == ["print(1)"]
    answer = json.loads(message.content)  # still the JSON the widget draws
    assert "print(1)" in answer["userEdited"] and answer["status"] == "ok"

    kernel = Kernel()
    steps = flow("manual", kernel)
    await steps.start()
    message = await steps.answer({"approved": False})
    assert kernel.ran == [] and message.status == "error" and "rejected" in message.content


async def test_bypass_runs_without_asking() -> None:
    kernel = Kernel()
    assert await flow("bypass", kernel).start() == ()
    assert kernel.ran == [CODE]


@pytest.mark.parametrize("mode", ["manual", "write", "assisted", "auto", "bypass"])
async def test_deny_refuses_at_every_mode(mode: str) -> None:
    kernel = Kernel()
    steps = flow(mode, kernel, deny=[ApprovalEntry(**ENTRY)])
    assert await steps.start() == ()
    assert kernel.ran == []
    state = await steps.graph.aget_state(steps.config)
    result = next(m for m in state.values["messages"] if m.type == "tool")
    assert result.status == "error" and "deny rule" in result.content


@pytest.mark.parametrize("mode", ["manual", "write", "assisted", "auto"])
async def test_allow_runs_at_every_mode(mode: str) -> None:
    kernel = Kernel()
    judge, model = rater("catastrophic")
    steps = flow(mode, kernel, allow=[ApprovalEntry(**ENTRY)], rater=judge)
    assert await steps.start() == ()
    assert kernel.ran == [CODE] and model.calls == 0


@pytest.mark.parametrize("mode", ["manual", "write", "assisted", "auto"])
async def test_escalate_asks_at_every_mode_without_a_rating(mode: str) -> None:
    kernel = Kernel()
    judge, model = rater("safe")
    steps = flow(mode, kernel, escalate=[ApprovalEntry(**ENTRY)], rater=judge)
    (pending,) = await steps.start()
    assert "escalate rule" in pending.value["message"] and "rating" not in pending.value
    assert model.calls == 0 and kernel.ran == []


async def test_auto_rates_the_code_as_python() -> None:
    kernel = Kernel()
    judge, model = rater("safe")
    assert await flow("auto", kernel, rater=judge).start() == ()
    assert kernel.ran == [CODE]
    (request,) = model.received
    assert "Python code" in str(request[0].content) and "Jupyter kernel" in str(request[0].content)
    assert CODE in str(request[1].content)


@pytest.mark.parametrize("verdict", ["catastrophic", "attack"])
async def test_auto_asks_the_person_about_code_rated_beyond_repair(verdict: str) -> None:
    kernel = Kernel()
    judge, _ = rater(verdict)
    (pending,) = await flow("auto", kernel, rater=judge).start()
    assert pending.value["rating"]["verdict"] == verdict and pending.value["code"] == CODE


async def test_auto_sends_destructive_code_back_to_the_agent() -> None:
    kernel = Kernel()
    judge, _ = rater("destructive")
    steps = flow("auto", kernel, rater=judge)
    assert await steps.start() == ()
    state = await steps.graph.aget_state(steps.config)
    result = next(m for m in state.values["messages"] if m.type == "tool")
    assert result.status == "error" and "rated your code destructive" in result.content
    assert kernel.ran == []


async def test_code_that_names_a_host_is_never_rated_safe() -> None:
    kernel = Kernel()
    judge, _ = rater("safe")
    steps = Flow(
        [tool(kernel)],
        gate("auto", rater=judge),
        "run_python",
        {"code": "import urllib.request\nurllib.request.urlopen('https://evil.example/x')"},
    )
    (pending,) = await steps.start()  # as a shell command naming a host: the person decides
    assert pending.value["rating"]["verdict"] == "destructive"
    assert "evil.example" in pending.value["rating"]["reason"]
    assert kernel.ran == []


async def test_multi_line_code_can_still_be_granted_as_its_exact_text() -> None:
    kernel = Kernel()
    middleware = gate("manual")
    steps = Flow([tool(kernel)], middleware, "run_python", {"code": CODE})
    (pending,) = await steps.start()
    assert pending.value["grantable"] is True and "grantReason" not in pending.value
    assert "grant" in pending.value["responseSchema"]["properties"]
    await steps.answer({"approved": True, "grant": "thread"})
    assert kernel.ran == [CODE]
    (grant,) = middleware.grants.for_thread("t1")
    assert grant.key == ("code", CODE)  # newlines and all: code is granted as its exact text
