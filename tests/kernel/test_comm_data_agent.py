"""The data agent over the comm transport, inside a real kernel: the agent runs on its own
thread there, lists the namespace in place and runs code on the kernel's main thread; the
stream is the same SSE the HTTP endpoint sends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from jupyter_client.manager import AsyncKernelManager

from gth_jupyter.kernel import KernelClient
from tests.kernel.conftest import evaluate

pytest.importorskip("matplotlib")

SCRIPT = [
    {"toolCalls": [{"name": "list_variables", "args": {}, "id": "c1"}]},
    {
        "toolCalls": [
            {
                "name": "run_python",
                "args": {
                    "code": "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                    "import threading\nprint(threading.current_thread().name)\n"
                    "agent_fig, agent_ax = plt.subplots()\nagent_ax.plot(revenue)\nplt.show()"
                },
                "id": "c2",
            }
        ]
    },
    "Plotted.",
]
RUN = """
import json
from gth_jupyter.notebook.host.comm_transport import CommTransport
revenue = [3, 1, 4, 1, 5]
_gth_sent = []
_gth_body = {
    "threadId": "comm-data", "runId": "r1",
    "messages": [{"id": "u1", "role": "user", "content": "plot revenue"}],
    "forwardedProps": {"gth": {"kernelId": "whatever-the-page-says"}},
}
_gth_run = CommTransport(_gth_sent.append).handle(
    {"type": "run", "requestId": "q1", "body": json.dumps(_gth_body)}
)
"""


async def test_a_comm_run_lists_in_place_and_plots_on_the_main_thread(
    tmp_path: Path, manager: AsyncKernelManager, kernel: KernelClient
) -> None:
    config = {
        "llm": {"type": "fake", "responses": SCRIPT},
        "approvals": {"allow": [{"type": "tool", "matcher": "exact", "pattern": "run_python"}]},
    }
    (tmp_path / ".gsloth.config.json").write_text(json.dumps(config))  # the kernel's cwd
    started = await kernel.execute(RUN, shell="main", timeout=60)
    assert started.reply["status"] == "ok", started.reply
    for _ in range(600):  # the main shell stays free for run_python: poll, never block
        if await evaluate(kernel, "_gth_run.done()"):
            break
        await asyncio.sleep(0.1)
    sent = json.loads(await evaluate(kernel, "json.dumps(_gth_sent)"))
    assert sent[-1] == {"type": "end", "requestId": "q1"}
    text = "".join(m["data"] for m in sent if m["type"] == "chunk")
    events = [json.loads(f[6:]) for f in text.split("\n\n") if f.startswith("data: ")]
    results = {
        e["toolCallId"]: json.loads(e["content"]) for e in events if e["type"] == "TOOL_CALL_RESULT"
    }
    listed = results["c1"]
    assert listed["ranOn"] == "in-kernel"
    assert [v["name"] for v in listed["variables"]] == ["revenue"]
    ran = results["c2"]
    assert ran["status"] == "ok" and ran["stdout"] == "MainThread\n"
    (image,) = ran["images"]
    assert image["mimeType"] == "image/png" and len(image["data"]) > 1000
    assert events[-1]["type"] == "RUN_FINISHED"
    assert await evaluate(kernel, "'agent_fig' in globals()") is True
