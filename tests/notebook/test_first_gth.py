"""The first ``%gth`` in a fresh kernel imports none of the agent stack.

LangChain and LangGraph take seconds to import. A widget served over HTTP never needs them in the
kernel: its header is labelled from the configuration alone, and the comm transport and the
kernel's own agent load only when the page sends a comm request that needs the agent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.notebook.conftest import run_in_kernel

AGENT_STACK = ("langchain", "langgraph")
LOADED = "import json, sys\nprint(json.dumps([m for m in {mods!r} if m in sys.modules]))"


def execute(client: Any, code: str) -> str:
    """Runs ``code`` and returns what it printed; a failing cell fails the test."""
    reply, printed = run_in_kernel(client, code)
    assert reply["status"] == "ok", reply
    return printed


def test_the_first_gth_in_a_kernel_imports_neither_langchain_nor_langgraph(
    kernel: Any, tmp_path: Path
) -> None:
    (tmp_path / ".gsloth.config.json").write_text(
        json.dumps({"llm": {"type": "anthropic", "model": "claude-sonnet-4-5"}})
    )
    execute(kernel, "%load_ext gth_jupyter")
    execute(kernel, "w = %gth hello")
    printed = execute(kernel, "print(w.model_label, w.offline)\n" + LOADED.format(mods=AGENT_STACK))
    label, loaded = printed.splitlines()
    assert label == "claude-sonnet-4-5 False"  # the header names the model all the same
    assert json.loads(loaded) == []


# The comm side runs in a fresh interpreter: this test process has imported everything already.
COMM = """
import json, sys
from gth_jupyter.notebook import GthChat

widget = GthChat(thread_id="t")
sent = []
widget.send = lambda content, buffers=None: sent.append(content)  # what goes to the page


def from_page(content):  # a custom message arriving on the widget's comm
    message = {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
    widget.comm.handle_msg(message)


loaded = lambda: [m for m in ("langchain", "langgraph") if m in sys.modules]
report = {"label": [widget.model_label, widget.offline], "built": loaded()}
from_page({"type": "esm", "requestId": "e"})
report["after_esm"] = loaded()
report["esm"] = sent[-1]["type"]
from_page({"type": "info", "requestId": "i"})
report["after_info"] = loaded()
report["info_model"] = sent[-1]["info"]["model"]
print(json.dumps(report))
"""


def fresh_python(code: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a new interpreter in ``folder`` (its HOME too); a failure fails the test."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env={"HOME": str(folder), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_agent_loads_with_the_first_comm_request_that_needs_it(tmp_path: Path) -> None:
    done = fresh_python(COMM, tmp_path)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["label"] == ["gth-demo (offline)", True]  # no configuration: the demo
    assert report["built"] == [] and report["after_esm"] == []  # the bundle needs no agent
    assert report["esm"] == "esm"
    assert report["after_info"] == ["langchain", "langgraph"]  # info asks the kernel's agent
    assert report["info_model"] == "gth-demo (offline)"


def test_a_python_configuration_is_not_run_for_a_label(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / ".gsloth.config.py").write_text(
        f"def configure():\n    open({str(marker)!r}, 'w').close()\n    return {{}}\n"
    )
    code = "from gth_jupyter.notebook import GthChat\nprint(repr(GthChat().model_label))"
    done = fresh_python(code, tmp_path)
    assert done.stdout.strip() == "''"  # the page labels it from the agent's info instead
    assert not marker.exists()


def test_a_widget_weighs_under_10_kb_however_many_tools_the_notebook_has() -> None:
    """What each ``%gth`` cell's widget sends the page when it opens (its synced state): a small
    loader, never the bundle, and no transcript; the notebook tools add nothing per instance."""
    from gth_jupyter.notebook.entry.widget import chat

    widget = chat("Hello! What can you do?")
    try:
        weight = len(json.dumps(widget.get_state(), default=str).encode())
    finally:
        widget.close()
    assert weight < 10_000, weight
