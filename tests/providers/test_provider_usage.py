"""Token usage over the real provider packages: what each wire reports reaches ``RUN_FINISHED``.

The stubs (``stubs.py``) report usage as each provider does: OpenAI in a last chunk it sends only
when ``stream_options.include_usage`` asks (cached prompt and reasoning tokens inside the
totals), Anthropic in ``message_start`` (cache reads and writes beside the input) and
``message_delta``. A run that calls a tool makes two model calls and reports their sum, once per
provider and model, with its cost from the installed price list.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from tests.providers.stubs import (
    ANTHROPIC_OUTPUT_TOKENS,
    ANTHROPIC_START_USAGE,
    GEMINI_USAGE,
    OLLAMA_USAGE,
    OPENAI_USAGE,
    Reply,
    StubServer,
)
from tests.providers.test_provider_wire import PROVIDERS, run, served

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

ANTHROPIC_INPUT = sum(ANTHROPIC_START_USAGE.values())


class Wire(NamedTuple):
    """A provider as the test drives it: its config, one call's usage as AG-UI's TokenUsage
    counts it (cached and reasoning inside the totals), and where its price comes from."""

    llm: Callable[[str], dict[str, Any]]
    one_call: dict[str, int]
    priced: bool  # False: a local model, with no price (and never another host's)


WIRES = {
    "openai": Wire(
        PROVIDERS["openai"],
        {
            "inputTokens": 1204,
            "outputTokens": 356,
            "totalTokens": 1560,
            "reasoningTokens": 120,
            "cachedInputTokens": 812,
            "cacheWriteInputTokens": 0,
        },
        priced=True,
    ),
    "anthropic": Wire(
        PROVIDERS["anthropic"],
        {
            "inputTokens": ANTHROPIC_INPUT,
            "outputTokens": ANTHROPIC_OUTPUT_TOKENS,
            "totalTokens": ANTHROPIC_INPUT + ANTHROPIC_OUTPUT_TOKENS,
            "reasoningTokens": 0,
            "cachedInputTokens": ANTHROPIC_START_USAGE["cache_read_input_tokens"],
            "cacheWriteInputTokens": ANTHROPIC_START_USAGE["cache_creation_input_tokens"],
        },
        priced=True,
    ),
    # Ollama and Gemini, with their own LangChain packages (langchain-ollama,
    # langchain-google-genai). Ollama counts the prompt and the answer: nothing cached, no
    # reasoning count.
    "ollama": Wire(
        lambda url: {"type": "ollama", "model": "llama3.1", "configuration": {"baseURL": url}},
        {
            "inputTokens": OLLAMA_USAGE["prompt_eval_count"],
            "outputTokens": OLLAMA_USAGE["eval_count"],
            "cachedInputTokens": 0,
        },
        priced=False,
    ),
    # Gemini's thoughts are output tokens (reasoning), its cached content part of the input.
    "google-genai": Wire(
        lambda url: {
            "type": "google-genai",
            "model": "gemini-2.5-flash",
            "apiKey": "stub-google-key",
            "configuration": {"baseURL": url},
        },
        {
            "inputTokens": GEMINI_USAGE["promptTokenCount"],
            "outputTokens": GEMINI_USAGE["candidatesTokenCount"]
            + GEMINI_USAGE["thoughtsTokenCount"],
            "reasoningTokens": GEMINI_USAGE["thoughtsTokenCount"],
            "cachedInputTokens": GEMINI_USAGE["cachedContentTokenCount"],
        },
        priced=True,
    ),
}


@pytest.mark.parametrize("provider", WIRES)
async def test_a_run_with_a_tool_call_reports_both_calls_usage_and_cost(
    tmp_path: Path, stub: StubServer, provider: str
) -> None:
    wire = WIRES[provider]
    llm = wire.llm(stub.url)
    (tmp_path / "notes.txt").write_text("forty-two\n")
    stub.script(Reply(tool_calls=[("read_file", {"path": "notes.txt"})]), "It says forty-two.")

    async with served(tmp_path, {"llm": llm, "filesystem": "read"}) as http:
        events = await run(http, "r1", "what do my notes say?")

    assert len(stub.requests) == 2
    assert "forty-two" in json.dumps(stub.requests[1].body)  # the tool's result went back
    if provider == "openai":  # asked for, or the usage chunk never comes
        assert all(r.body["stream_options"] == {"include_usage": True} for r in stub.requests)
    finished = events[-1]
    assert finished["outcome"]["type"] == "success"
    (usage,) = finished["usage"]
    assert usage["provider"] == provider
    assert usage["model"].startswith(llm["model"])
    expected = {k: 2 * v for k, v in wire.one_call.items()}
    assert {k: usage[k] for k in expected} == expected
    cost = finished["metadata"]["gth"]["cost"]
    if wire.priced:
        assert cost["source"] == "genai-prices"
        assert 0 < cost["usd"] < 0.1
    else:
        assert cost == {"usd": None, "source": "unknown"}


async def test_openai_usage_is_asked_for_even_from_a_local_server(
    tmp_path: Path, stub: StubServer
) -> None:
    """LM Studio's example config (a local base URL): LangChain asks for usage only for
    OpenAI's own API unless told; the usage still comes, and an unknown model has no cost."""
    llm = {
        "type": "openai",
        "model": "openai/gpt-oss-local-only",
        "apiKey": "none",
        "configuration": {"baseURL": f"{stub.url}/v1"},
    }
    stub.script("Hi.")
    async with served(tmp_path, {"llm": llm}) as http:
        events = await run(http, "r1", "hi")
    (request,) = stub.requests
    assert request.body["stream_options"] == {"include_usage": True}
    (usage,) = events[-1]["usage"]
    assert usage["inputTokens"] == OPENAI_USAGE["prompt_tokens"]
    assert events[-1]["metadata"]["gth"]["cost"] == {"usd": None, "source": "unknown"}


async def test_a_configured_price_wins_over_the_price_list(
    tmp_path: Path, stub: StubServer
) -> None:
    llm = PROVIDERS["anthropic"](stub.url)
    price = {"inputPerMTok": 1.0, "outputPerMTok": 2.0, "cachedInputPerMTok": 0.5}
    config = {"llm": llm, "pricing": {"anthropic": {llm["model"]: price}}}
    stub.script("Hi.")
    async with served(tmp_path, config) as http:
        events = await run(http, "r1", "hi")
    cached = ANTHROPIC_START_USAGE["cache_read_input_tokens"]
    plain = ANTHROPIC_INPUT - cached  # the cache writes at the input price (none configured)
    usd = (plain * 1.0 + cached * 0.5 + ANTHROPIC_OUTPUT_TOKENS * 2.0) / 1_000_000
    cost = events[-1]["metadata"]["gth"]["cost"]
    assert cost["source"] == "config"
    assert cost["usd"] == pytest.approx(usd)
