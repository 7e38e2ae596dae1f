"""The kernel tools through the Jupyter extension: the widget names its kernel in
``forwardedProps.gth.kernelId``; the server reaches that kernel with its own client, and an id
it does not run is refused before anything else. The standalone server has no kernels."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tornado.httpclient import HTTPClientError

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import GthConfig
from gth_jupyter.server.standalone import make_app
from gth_jupyter.store import CheckpointStore
from tests.sse import sse_events as parse_sse

KERNEL_TOOLS = ["list_variables", "describe_variable", "run_python"]
SCRIPT: list[Any] = [
    {"toolCalls": [{"name": "run_python", "args": {"code": "agent_rows = [3, 1, 2]"}, "id": "c1"}]},
    {"toolCalls": [{"name": "list_variables", "args": {}, "id": "c2"}]},
    {"toolCalls": [{"name": "describe_variable", "args": {"name": "agent_rows"}, "id": "c3"}]},
    "Done.",
]


@pytest.fixture
def gth_config() -> dict[str, Any]:
    return {
        "llm": {"type": "fake", "responses": SCRIPT},
        "builtInTools": KERNEL_TOOLS,
        # An allow entry lets run_python run at the default mode, which would ask.
        "approvals": {"allow": [{"type": "tool", "matcher": "exact", "pattern": "run_python"}]},
    }


def body(thread: str, **gth: Any) -> str:
    message = {"id": "u1", "role": "user", "content": "what data do I have?"}
    return json.dumps(
        {"threadId": thread, "runId": "r", "messages": [message], "forwardedProps": {"gth": gth}}
    )


def events(raw: bytes) -> list[dict[str, Any]]:
    return parse_sse(raw)


async def test_info_lists_the_kernel_tools(jp_fetch) -> None:
    info = json.loads((await jp_fetch("gth", "info")).body)
    assert info["kernelTools"] == {"available": True, "tools": KERNEL_TOOLS}


async def test_an_unknown_kernel_is_refused_and_the_thread_stays_free(jp_fetch) -> None:
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch(
            "gth", "agents", "default", "run", method="POST", body=body("t", kernelId="nope")
        )
    assert refused.value.code == 404
    assert refused.value.response is not None
    answer = json.loads(refused.value.response.body)
    assert answer["code"] == "kernel_not_found" and "nope" in answer["message"]
    view = json.loads((await jp_fetch("gth", "threads", "t")).body)
    assert view["messages"] == [] and view["busy"] is False

    with pytest.raises(HTTPClientError) as malformed:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=body("t", kernelId=7))
    assert malformed.value.code == 422

    # Clients other than the widget may name the kernel at forwardedProps.kernelId.
    plain = json.loads(body("t"))
    plain["forwardedProps"] = {"kernelId": "nope"}
    with pytest.raises(HTTPClientError) as other:
        await jp_fetch("gth", "agents", "default", "run", method="POST", body=json.dumps(plain))
    assert other.value.code == 404


async def test_a_run_works_in_the_named_kernel(jp_fetch) -> None:
    kernel = json.loads((await jp_fetch("api", "kernels", method="POST", body="{}")).body)
    try:
        response = await jp_fetch(
            "gth",
            "agents",
            "default",
            "run",
            method="POST",
            body=body("t", kernelId=kernel["id"]),
            request_timeout=120,
        )
        results = {
            e["toolCallId"]: json.loads(e["content"])
            for e in events(response.body)
            if e["type"] == "TOOL_CALL_RESULT"
        }
        assert results["c1"]["status"] == "ok"
        (listed,) = results["c2"]["variables"]
        assert listed["name"] == "agent_rows" and listed["length"] == 3
        assert results["c2"]["ranOn"] in ("subshell", "main")
        assert results["c3"]["repr"] == "[3, 1, 2]"
    finally:
        await jp_fetch("api", "kernels", kernel["id"], method="DELETE")


async def test_the_standalone_server_leaves_the_kernel_tools_out() -> None:
    import httpx

    config = GthConfig.model_validate({"llm": {"type": "demo"}, "builtInTools": KERNEL_TOOLS})
    registry = AgentRegistry(config, command="notebook", store=CheckpointStore("memory"))
    app = make_app(registry, token="s3cret-s3cret-s3cret", max_body_bytes=100_000)
    server = app.listen(0, address="127.0.0.1")
    port = next(iter(server._sockets.values())).getsockname()[1]
    headers = {"Authorization": "token s3cret-s3cret-s3cret"}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            info = (await http.get("/gth/info", headers=headers)).json()
            refused = await http.post(
                "/gth/agents/default/run", headers=headers, content=body("t", kernelId="k")
            )
    finally:
        server.stop()
    assert info["kernelTools"]["available"] is False
    assert "no notebook kernels" in info["kernelTools"]["reason"]
    assert not set(KERNEL_TOOLS) & set(info["agents"][0]["tools"])
    assert refused.status_code == 404 and refused.json()["code"] == "kernel_not_found"
