"""What a run's tokens cost: the configuration's ``pricing`` first, then ``genai-prices``.

``genai-prices`` (pydantic's price list) ships its snapshot in the wheel: prices are those of the
installed release, read offline. Its updater (which fetches from the network) is never started.
A model neither knows has no cost ("cost unknown"), never a guess; the offline models (the demo
and the scripted one) cost nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..config.schema import ModelPrice
from ..contract.usage import TokenCounts, UsageAccount

__all__ = ["OFFLINE_PROVIDERS", "Pricer", "cost_json"]

log = logging.getLogger(__name__)

#: The offline models' providers (``llm.type``): free.
OFFLINE_PROVIDERS = frozenset({"demo", "fake"})
# ``llm.type`` (or a reply's ``model_provider``) -> genai-prices' provider id.
_PRICE_PROVIDERS: Mapping[str, str] = {
    "google-genai": "google",
    "google_genai": "google",
    "vertexai": "google",
    "google_vertexai": "google",
    "mistralai": "mistral",
    "xai": "x-ai",
}


@dataclass(frozen=True)
class Cost:
    """``usd`` ``None``: some model of the account has no known price."""

    usd: float | None
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"usd": None if self.usd is None else round(self.usd, 8), "source": self.source}


def cost_json(cost: Cost | None) -> dict[str, Any] | None:
    return None if cost is None else cost.to_json()


def _from_config(price: ModelPrice, counts: TokenCounts) -> float:
    cached = price.cached_input_per_mtok
    writes = price.cache_write_input_per_mtok
    plain = max(0, counts.input - counts.cached_input - counts.cache_write_input)
    total = plain * price.input_per_mtok
    total += counts.cached_input * (price.input_per_mtok if cached is None else cached)
    total += counts.cache_write_input * (price.input_per_mtok if writes is None else writes)
    total += counts.output * price.output_per_mtok
    return total / 1_000_000


@lru_cache(maxsize=256)
def _listed(provider: str, model: str, counts: tuple[int, int, int, int]) -> float | None:
    """The installed ``genai-prices`` cost, or ``None`` when it does not know the model."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # pragma: no cover - a dependency; absent only in a broken install
        return None
    inputs, cached, writes, outputs = counts
    usage = Usage(
        input_tokens=inputs,
        cache_read_tokens=cached or None,
        cache_write_tokens=writes or None,
        output_tokens=outputs,
    )
    provider_id = _PRICE_PROVIDERS.get(provider, provider)
    if not provider_id:
        return None
    try:
        # Never by model name alone: a local Ollama's llama3 is not some host's llama3.
        found = calc_price(usage, model, provider_id=provider_id)
    except LookupError:
        return None
    except Exception:  # a price list that cannot price this: unknown, never a failed run
        log.debug("genai-prices could not price %s/%s", provider, model, exc_info=True)
        return None
    return float(found.total_price)


class Pricer:
    """Prices accounts with the configuration's ``pricing`` (``{llm type: {model: price}}``),
    then the installed price list."""

    def __init__(self, overrides: Mapping[str, Mapping[str, ModelPrice]] | None = None) -> None:
        self._overrides = overrides or {}

    def cost_of(self, provider: str, model: str, counts: TokenCounts) -> Cost | None:
        """One model's cost; ``None`` when no price is known."""
        configured = self._overrides.get(provider, {}).get(model)
        if configured is not None:  # first: a contract's price, or a test's for the offline ones
            return Cost(_from_config(configured, counts), "config")
        if provider in OFFLINE_PROVIDERS:
            return Cost(0.0, "offline")
        if not model:
            return None
        key = (counts.input, counts.cached_input, counts.cache_write_input, counts.output)
        listed = _listed(provider, model, key)
        return None if listed is None else Cost(listed, "genai-prices")

    def cost(self, account: UsageAccount) -> Cost | None:
        """The account's cost: ``None`` for an empty account; ``usd`` ``None`` when a model
        in it has no price; the source is ``config`` when any price came from the
        configuration."""
        if not account:
            return None
        usd = 0.0
        sources: list[str] = []
        for (provider, model), counts in account.by_model.items():
            found = self.cost_of(provider, model, counts)
            if found is None:
                return Cost(None, "unknown")
            usd += found.usd or 0.0
            sources.append(found.source)
        source = next((s for s in ("config", "genai-prices") if s in sources), "offline")
        return Cost(usd, source)
