"""``GET gth/agents/{name}/capabilities`` (issue 19): the agent's AG-UI ``AgentCapabilities``,
valid for ag-ui-protocol's own type, on the Jupyter extension and the standalone server (which
serves it beside Gaunt Sloth's ``/agents/{name}/run`` too); behind auth like every route."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import AgentCapabilities
from tornado.httpclient import HTTPClientError

from tests.standalone import standalone

TOKEN = "capabilities-token-1234"


@pytest.fixture
def gth_config() -> dict[str, Any]:
    return {
        "llm": {"type": "fake", "responses": ["ok"]},
        "builtInTools": ["run_python", "list_variables", "gth_status_update"],
        "approvals": {"mode": "write"},
    }


def check(body: dict[str, Any]) -> AgentCapabilities:
    capabilities = AgentCapabilities.model_validate(body)
    assert body["transport"] == {
        "streaming": True,
        "websocket": False,
        "httpBinary": False,
        "resumable": True,
    }
    assert body["tools"]["supported"] and body["tools"]["clientProvided"] is True
    assert body["state"]["snapshots"] and body["state"]["deltas"]
    assert body["humanInTheLoop"]["interrupts"] and body["humanInTheLoop"]["approveWithEdits"]
    assert body["reasoning"]["supported"] and body["multimodal"]["input"]["image"]
    return capabilities


async def test_the_extension_says_what_the_agent_can_do(jp_fetch: Any) -> None:
    answer = await jp_fetch("gth", "agents", "default", "capabilities")
    body = json.loads(answer.body)
    capabilities = check(body)
    names = [t["name"] for t in body["tools"]["items"]]
    assert {"run_python", "list_variables", "gth_status_update"} <= set(names)
    status = next(t for t in body["tools"]["items"] if t["name"] == "gth_status_update")
    assert status["parameters"]["type"] == "object" and status["description"]
    assert body["execution"]["codeExecution"] is True  # run_python is on
    assert body["humanInTheLoop"]["approvals"] is True
    assert capabilities.identity is not None and capabilities.identity.name == "default"


async def test_an_unknown_agent_is_404(jp_fetch: Any) -> None:
    with pytest.raises(HTTPClientError) as missing:
        await jp_fetch("gth", "agents", "nobody", "capabilities")
    assert missing.value.code == 404
    assert json.loads(missing.value.response.body)["code"] == "agent_not_found"


async def test_the_standalone_server_serves_it_at_both_paths(tmp_path: Path) -> None:
    config = {"llm": {"type": "fake", "responses": ["ok"]}, "builtInTools": ["gth_status_update"]}
    async with standalone(tmp_path, config, token=TOKEN) as server:
        auth = {"Authorization": f"token {TOKEN}"}
        for path in ("/gth/agents/default/capabilities", "/agents/default/capabilities"):
            answer = await server.http.get(path, headers=auth)
            assert answer.status_code == 200, answer.text
            body = answer.json()
            check(body)
            assert body["execution"]["codeExecution"] is False  # no code tool here
        refused = await server.http.get("/agents/default/capabilities")  # no token
        assert refused.status_code == 401 and refused.json()["code"]
