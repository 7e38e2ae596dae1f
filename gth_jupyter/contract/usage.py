"""Token usage: what one model call reported, and a run's, turn's or thread's sum of it.

LangChain puts a call's counts on its ``AIMessage.usage_metadata`` (input and output totals,
cache reads and writes inside the input, reasoning inside the output) and the model's name and
provider in ``response_metadata``. They are read from the finished message (the graph's node
update, one per model call), never from the token stream, so nothing is added per token. AG-UI
1.0 carries the sum as ``RUN_FINISHED.usage`` / ``RUN_ERROR.usage``: one ``TokenUsage`` per
provider and model. A message that reports no usage counts nothing (never a guess), except the
offline models', which estimate theirs (:func:`estimate_tokens`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # not imported at run time: the notebook's copy renderer reads this module
    from langchain_core.messages import BaseMessage

__all__ = [
    "ModelCall",
    "TokenCounts",
    "UsageAccount",
    "estimate_tokens",
    "model_call_of",
    "sum_accounts",
    "usage_of_messages",
    "usage_text",
    "usd_text",
]

#: The counts, as AG-UI ``TokenUsage`` names them.
COUNT_NAMES = (
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "reasoningTokens",
    "cachedInputTokens",
    "cacheWriteInputTokens",
)


def estimate_tokens(text: str) -> int:
    """A rough count for text no tokenizer counted: about four characters a token."""
    return math.ceil(len(text) / 4) if text else 0


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@dataclass
class TokenCounts:
    """Counts of one call or a sum of calls. ``cached_input`` and ``cache_write_input`` are
    parts of ``input``, ``reasoning`` part of ``output`` (as AG-UI and LangChain count)."""

    input: int = 0
    output: int = 0
    total: int = 0
    reasoning: int = 0
    cached_input: int = 0
    cache_write_input: int = 0

    @classmethod
    def from_metadata(cls, usage: Mapping[str, Any]) -> TokenCounts:
        """From LangChain's ``UsageMetadata`` (``input_tokens``, ``input_token_details`` …)."""
        inputs = usage.get("input_token_details")
        outputs = usage.get("output_token_details")
        inputs = inputs if isinstance(inputs, Mapping) else {}
        outputs = outputs if isinstance(outputs, Mapping) else {}
        given_in, given_out = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
        return cls(
            input=given_in,
            output=given_out,
            total=_count(usage.get("total_tokens")) or given_in + given_out,
            reasoning=_count(outputs.get("reasoning")),
            cached_input=_count(inputs.get("cache_read")),
            cache_write_input=_count(inputs.get("cache_creation")),
        )

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> TokenCounts:
        """From the camelCase counts this module writes (:meth:`to_json`)."""
        return cls(*(_count(value.get(name)) for name in COUNT_NAMES))

    def add(self, other: TokenCounts) -> None:
        self.input += other.input
        self.output += other.output
        self.total += other.total
        self.reasoning += other.reasoning
        self.cached_input += other.cached_input
        self.cache_write_input += other.cache_write_input

    def to_json(self) -> dict[str, int]:
        """The camelCase counts of AG-UI's ``TokenUsage`` (all of them, zeros included)."""
        values = (
            self.input,
            self.output,
            self.total,
            self.reasoning,
            self.cached_input,
            self.cache_write_input,
        )
        return dict(zip(COUNT_NAMES, values, strict=True))

    def __bool__(self) -> bool:
        return bool(self.input or self.output or self.total)


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call's usage (a stream item: the model node finished). ``message_id``: the
    assistant message it answered with, so a call is counted once."""

    provider: str
    model: str
    counts: TokenCounts
    message_id: str = ""


def model_call_of(message: BaseMessage, provider: str = "", model: str = "") -> ModelCall | None:
    """The usage an assistant message reports, or ``None`` (no usage, or not a model's).
    ``provider`` names the provider as the configuration does (``llm.type``: ``openrouter``
    where the reply says ``openai``), when known; ``model`` is the model when the reply does
    not name it."""
    usage = getattr(message, "usage_metadata", None)  # only an assistant message has it
    if not isinstance(usage, Mapping) or not usage:
        return None
    counts = TokenCounts.from_metadata(usage)
    if not counts:
        return None
    meta = getattr(message, "response_metadata", None) or {}
    named = meta.get("model_name") or meta.get("model") or model
    provider = provider or meta.get("model_provider") or ""
    return ModelCall(str(provider), str(named), counts, message.id or "")


@dataclass
class UsageAccount:
    """A sum of model calls, kept per ``(provider, model)`` in the order first seen."""

    by_model: dict[tuple[str, str], TokenCounts] = field(default_factory=dict)
    calls: int = 0

    def add(self, call: ModelCall) -> None:
        key = (call.provider, call.model)
        counts = self.by_model.get(key)
        if counts is None:
            counts = self.by_model[key] = TokenCounts()
        counts.add(call.counts)
        self.calls += 1

    def merge(self, other: UsageAccount) -> None:
        for (provider, model), counts in other.by_model.items():
            mine = self.by_model.setdefault((provider, model), TokenCounts())
            mine.add(counts)
        self.calls += other.calls

    def total(self) -> TokenCounts:
        whole = TokenCounts()
        for counts in self.by_model.values():
            whole.add(counts)
        return whole

    def entries(self) -> list[dict[str, Any]]:
        """AG-UI ``TokenUsage`` objects (camelCase), one per provider and model."""
        out: list[dict[str, Any]] = []
        for (provider, model), counts in self.by_model.items():
            entry: dict[str, Any] = {}
            if provider:
                entry["provider"] = provider
            if model:
                entry["model"] = model
            entry.update(counts.to_json())
            out.append(entry)
        return out

    def __bool__(self) -> bool:
        return bool(self.by_model)


def usage_of_messages(messages: Iterable[BaseMessage]) -> UsageAccount:
    """The usage the assistant messages among ``messages`` report (each message once)."""
    account = UsageAccount()
    seen: set[str] = set()
    for message in messages:
        call = model_call_of(message)
        if call is None or (call.message_id and call.message_id in seen):
            continue
        seen.add(call.message_id)
        account.add(call)
    return account


def usd_text(usd: float) -> str:
    """Dollars as a person reads a small bill: ``$0.0041``, ``$0.127``, ``$3.20``."""
    if usd == 0:
        return "$0.00"
    if usd < 0.01:
        return f"${usd:.4f}"
    if usd < 1:
        return f"${usd:.3f}"
    return f"${usd:,.2f}"


def usage_text(usage: Iterable[Mapping[str, Any]], cost: Mapping[str, Any] | None) -> str:
    """One quiet line for a turn's or a thread's account, from its AG-UI ``TokenUsage`` list and
    ``cost``: ``1,204 in · 356 out · 812 cached · $0.0041``; ``cost unknown`` where a model has
    no price; ``""`` for no usage at all. The widget writes the same (``js/src/usage.js``)."""
    total = TokenCounts()
    for entry in usage:
        if isinstance(entry, Mapping):
            total.add(TokenCounts.from_json(entry))
    if not total:
        return ""
    parts = [f"{total.input:,} in", f"{total.output:,} out"]
    if total.cached_input:
        parts.append(f"{total.cached_input:,} cached")
    usd = cost.get("usd") if isinstance(cost, Mapping) else None
    if isinstance(usd, int | float) and not isinstance(usd, bool):
        parts.append(usd_text(float(usd)))
    elif isinstance(cost, Mapping):
        parts.append("cost unknown")
    return " · ".join(parts)


def sum_accounts(
    accounts: Iterable[tuple[Iterable[Mapping[str, Any]], Mapping[str, Any] | None]],
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Several ``(usage, cost)`` pairs as one (a cell's turns, say): the usage merged per
    provider and model, the dollars added (unknown when any is)."""
    merged = UsageAccount()
    usd: float | None = 0.0
    sources: list[str] = []
    priced = False
    for usage, cost in accounts:
        for entry in usage:
            if isinstance(entry, Mapping):
                provider, model = str(entry.get("provider") or ""), str(entry.get("model") or "")
                merged.add(ModelCall(provider, model, TokenCounts.from_json(entry)))
        if isinstance(cost, Mapping):
            priced = True
            value = cost.get("usd")
            usd = usd + float(value) if usd is not None and isinstance(value, int | float) else None
            sources.append(str(cost.get("source") or ""))
    if not priced:
        return merged.entries(), None
    source = (
        "unknown"
        if usd is None
        else next((s for s in ("config", "genai-prices") if s in sources), "offline")
    )
    return merged.entries(), {"usd": usd, "source": source}
