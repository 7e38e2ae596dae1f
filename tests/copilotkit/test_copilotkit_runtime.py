"""gth-jupyter serve through CopilotKit's runtime: runs the Node suite in this folder.

``@copilotkit/runtime`` 1.75.0 (pinned in ``package.json``) bundles ``@ag-ui/client`` 0.0.59,
which sends no ``protocolVersion`` and verifies every event with 0.0.59's schemas, so the suite
checks the 0.x dialect end to end: the Dojo's chat, server tool and three frontend tools, shared
state, agentic generative UI, reasoning and an image input. The server executable is this
interpreter's (``GTH_JUPYTER_BIN``), so it tests the code under test.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

SUITE_DIR = Path(__file__).resolve().parent
RUNTIME_PACKAGE = SUITE_DIR / "node_modules" / "@copilotkit" / "runtime" / "package.json"
TIMEOUT_S = 300


def _server_bin() -> Path:
    scripts = Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin")
    return scripts / ("gth-jupyter.exe" if os.name == "nt" else "gth-jupyter")


@pytest.mark.node
@pytest.mark.timeout(TIMEOUT_S + 30)
def test_copilotkit_runtime_carries_chat_server_and_frontend_tools() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH; the CopilotKit suite needs Node.js >= 20")
    if not RUNTIME_PACKAGE.is_file():
        pytest.skip("tests/copilotkit/node_modules is missing; run `npm ci` in tests/copilotkit/")
    env = dict(os.environ, COPILOTKIT_TELEMETRY_DISABLED="true")
    server_bin = _server_bin()
    if server_bin.is_file():
        env["GTH_JUPYTER_BIN"] = str(server_bin)
    proc = subprocess.Popen(
        [node, "--test", "copilotkit.test.mjs"],
        cwd=SUITE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=os.name != "nt",
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        if os.name != "nt":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        output, _ = proc.communicate()
        pytest.fail(f"node --test did not finish within {TIMEOUT_S} s:\n{output}", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"the CopilotKit suite exited with {proc.returncode}:\n{output}", pytrace=False)
