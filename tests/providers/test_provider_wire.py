"""The real ``langchain-openai`` and ``langchain-anthropic`` over HTTP, via the standalone server.

Each test starts a local stub of the provider's API (``stubs.py``), writes a
``.gsloth.config.json`` pointing at it the way a Gaunt Sloth user would (JS option names), and
drives the standalone AG-UI endpoint: a chat turn, a ``capture_image`` suspend and resume, an
approval. The stub records what the provider package sent: the key in the right header and no
other provider's key, and the photo as that provider's image block, exactly once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from gth_jupyter.agent import AgentRegistry
from gth_jupyter.config import load_config
from gth_jupyter.models import resolve_model
from gth_jupyter.server.standalone import make_app
from gth_jupyter.store import CheckpointStore
from tests.helpers import free_port
from tests.providers.conftest import ENV_KEYS
from tests.providers.stubs import Reply, StubServer
from tests.sse import sse_events as parse_sse

# The anthropic SDK warns about a model's end of life from its name alone; the stub has no model.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

TOKEN = "provider-stub-token-1234"
AUTH = {"Authorization": f"token {TOKEN}"}
PHOTO = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
CAMERA = {
    "name": "capture_image",
    "description": "Capture a frame from the webcam.",
    "parameters": {"type": "object", "properties": {}},
}

# How each provider is configured (as in Gaunt Sloth's docs) and how its key travels.
PROVIDERS: dict[str, Callable[[str], dict[str, Any]]] = {
    "openai": lambda url: {
        "type": "openai",
        "model": "gpt-4o-mini",
        "apiKey": "sk-stub-openai",
        "configuration": {"baseURL": f"{url}/v1"},
    },
    "anthropic": lambda url: {
        "type": "anthropic",
        "model": "claude-sonnet-4-5",
        "apiKey": "sk-stub-anthropic",
        "configuration": {"baseURL": url},
    },
}


@asynccontextmanager
async def served(root: Path, config: dict[str, Any]) -> AsyncIterator[httpx.AsyncClient]:
    """``gth-jupyter serve`` in process, on the configuration written to ``root``."""
    (root / ".gsloth.config.json").write_text(json.dumps(config))
    registry = AgentRegistry(
        load_config(cwd=root, home=root),
        command="notebook",  # the command that answers approvals and client tools
        store=CheckpointStore("memory"),
        cwd=root,
    )
    server = make_app(registry, token=TOKEN, max_body_bytes=1_000_000).listen(
        port := free_port(), address="127.0.0.1"
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            yield http
    finally:
        server.stop()
        await registry.close()


async def run(http: httpx.AsyncClient, run_id: str, text: str, **extra: Any) -> list[dict]:
    body = {
        "threadId": "t",
        "runId": run_id,
        "protocolVersion": "1.0",
        "messages": [{"id": "u1", "role": "user", "content": text}],
        **extra,
    }
    response = await http.post("/agents/default/run", headers=AUTH, json=body)
    assert response.status_code == 200, response.text
    events = parse_sse(response.text)
    assert events[-1]["type"] == "RUN_FINISHED", events[-1]
    return events


def text_of(events: list[dict]) -> str:
    return "".join(e.get("delta", "") for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def assert_only_its_own_key(stub: StubServer, provider: str, key: str) -> None:
    assert stub.requests
    for request in stub.requests:
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if provider == "anthropic":
            # The anthropic SDK sends the key as x-api-key (older) or a bearer token (2.x).
            assert request.headers.get("x-api-key", bearer) == key
            assert "anthropic-version" in request.headers
        else:
            assert bearer == key
        sent = json.dumps(request.headers) + json.dumps(request.body)
        assert not any(leaked in sent for leaked in ENV_KEYS.values())
        # Client settings never travel as request parameters (they once did, in model_kwargs).
        assert not {"apiKey", "baseURL", "configuration"} & set(request.body)


def image_blocks(provider: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = [
        block
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
    ]
    wanted = "image_url" if provider == "openai" else "image"
    return [b for b in blocks if b.get("type") == wanted]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_chat_turn(tmp_path: Path, stub: StubServer, provider: str) -> None:
    llm = PROVIDERS[provider](stub.url)
    stub.script("Hello from the stub.")

    async with served(tmp_path, {"llm": llm}) as http:
        events = await run(http, "r1", "hi")

    assert text_of(events) == "Hello from the stub."
    (request,) = stub.requests
    assert request.body["model"] == llm["model"]
    assert request.body["stream"] is True  # the run streams tokens: the SSE path of the stub
    assert_only_its_own_key(stub, provider, llm["apiKey"])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_capture_image_suspends_and_the_photo_reaches_the_model_once(
    tmp_path: Path, stub: StubServer, provider: str
) -> None:
    llm = PROVIDERS[provider](stub.url)
    config = {"llm": llm, "middleware": ["frontend-image-injection"]}
    stub.script(Reply(tool_calls=[("capture_image", {})]), "A lovely photo.")

    async with served(tmp_path, config) as http:
        first = await run(http, "r1", "take a photo", tools=[CAMERA])
        (pending,) = first[-1]["outcome"]["pendingToolCallIds"]
        photo = {"mimeType": "image/png", "data": PHOTO}
        resume = [{"interruptId": pending, "status": "resolved", "payload": photo}]
        second = await run(http, "r2", "take a photo", tools=[CAMERA], resume=resume)

    assert text_of(second) == "A lovely photo."
    assert [e["toolCallId"] for e in second if e["type"] == "TOOL_CALL_RESULT"] == [pending]
    asked, answered = stub.requests
    assert [t.get("name") or t["function"]["name"] for t in asked.body["tools"]].count(
        "capture_image"
    ) == 1
    assert image_blocks(provider, asked.body) == []
    expected = (
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PHOTO}"}}
        if provider == "openai"
        else {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": PHOTO},
        }
    )
    assert image_blocks(provider, answered.body) == [expected]
    assert json.dumps(answered.body).count(PHOTO) == 1  # not also in the tool result
    assert_only_its_own_key(stub, provider, llm["apiKey"])


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_approval_interrupts_and_the_approved_command_runs(
    tmp_path: Path, stub: StubServer, provider: str
) -> None:
    llm = PROVIDERS[provider](stub.url)
    config = {"llm": llm, "builtInTools": {"run_shell_command": True}, "approvals": "manual"}
    shell = ("run_shell_command", {"command": "echo approved > out.txt"})
    stub.script(Reply(text="Writing it.", tool_calls=[shell]), "Finished.")

    async with served(tmp_path, config) as http:
        first = await run(http, "r1", "write the file")
        outcome = first[-1]["outcome"]
        assert outcome["type"] == "interrupt"
        (interrupt,) = outcome["interrupts"]
        assert interrupt["reason"] == "confirmation"
        assert not (tmp_path / "out.txt").exists()
        answer = {"approved": True}
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": answer}]
        second = await run(http, "r2", "write the file", resume=resume)

    assert second[-1]["outcome"]["type"] == "success"
    assert (tmp_path / "out.txt").read_text().strip() == "approved"
    assert text_of(second) == "Finished."
    _, answered = stub.requests
    result = answered.body["messages"][-1]
    if provider == "openai":
        assert (result["role"], result["tool_call_id"]) == ("tool", "call_0")
    else:
        (block,) = [b for b in result["content"] if b["type"] == "tool_result"]
        assert block["tool_use_id"] == "toolu_0"
    assert_only_its_own_key(stub, provider, llm["apiKey"])


async def test_the_lm_studio_example_works_end_to_end(tmp_path: Path, stub: StubServer) -> None:
    """Gaunt Sloth's LM Studio config, verbatim but for the port."""
    llm = {
        "type": "openai",
        "model": "openai/gpt-oss-20b",
        "apiKey": "none",
        "configuration": {"baseURL": f"{stub.url}/v1"},
    }
    stub.script("Hi from LM Studio.")

    async with served(tmp_path, {"llm": llm}) as http:
        info = (await http.get("/info", headers=AUTH)).json()
        events = await run(http, "r1", "hi")

    assert (info["provider"], info["model"]) == ("openai", "openai/gpt-oss-20b")
    assert text_of(events) == "Hi from LM Studio."
    (request,) = stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "openai/gpt-oss-20b"
    assert_only_its_own_key(stub, "openai", "none")


async def test_openrouter_sends_its_own_key_and_never_openais(
    tmp_path: Path, stub: StubServer
) -> None:
    llm = {
        "type": "openrouter",
        "model": "qwen/qwen3-coder",
        "apiKeyEnvironmentVariable": "OPEN_ROUTER_API_KEY",
        "configuration": {"baseURL": f"{stub.url}/v1"},
    }
    stub.script("Routed.")

    async with served(tmp_path, {"llm": llm}) as http:
        events = await run(http, "r1", "hi")

    assert text_of(events) == "Routed."
    (request,) = stub.requests
    assert request.headers["authorization"] == f"Bearer {ENV_KEYS['OPEN_ROUTER_API_KEY']}"
    assert request.headers["x-title"] == "gth-jupyter"
    assert ENV_KEYS["OPENAI_API_KEY"] not in json.dumps(request.headers)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_non_streamed_reply_with_a_tool_call(stub: StubServer, provider: str) -> None:
    """The JSON (non-streaming) path, as a rater or ``invoke`` uses it, tool calls included."""
    llm = {**PROVIDERS[provider](stub.url), "streaming": False, "maxTokens": 64}
    stub.script(Reply(text="Let me add.", tool_calls=[("add", {"a": 2, "b": 3})]))
    tool = {
        "name": "add",
        "description": "Adds two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        },
    }

    reply = resolve_model(llm).bind_tools([tool]).invoke("2 + 3?")

    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("add", {"a": 2, "b": 3})]
    (request,) = stub.requests
    assert not request.body.get("stream")
    assert request.body["max_completion_tokens" if provider == "openai" else "max_tokens"] == 64
    assert_only_its_own_key(stub, provider, llm["apiKey"])
