"""Prices: the configuration's first, then the installed ``genai-prices``; an unknown model has
no cost (never a guess); the offline models cost nothing."""

from __future__ import annotations

import pytest

from gth_jupyter.agent.pricing import Pricer
from gth_jupyter.config.schema import ModelPrice
from gth_jupyter.contract.usage import ModelCall, TokenCounts, UsageAccount

# Below the long-context tiers some models price higher (above 200K input tokens).
CALL = TokenCounts(input=100_000, output=10_000, total=110_000, cached_input=20_000)


def account(*calls: tuple[str, str]) -> UsageAccount:
    out = UsageAccount()
    for provider, model in calls:
        out.add(ModelCall(provider, model, CALL))
    return out


def test_a_model_the_price_list_knows_has_its_price() -> None:
    cost = Pricer().cost(account(("anthropic", "claude-sonnet-4-5")))
    assert cost is not None and cost.source == "genai-prices"
    # $3/MTok input, $0.30 cached, $15 output (the price list's, as of its release)
    assert cost.usd == pytest.approx(0.08 * 3 + 0.02 * 0.3 + 0.01 * 15)


def test_a_configured_price_wins() -> None:
    price = ModelPrice.model_validate({"inputPerMTok": 1.0, "outputPerMTok": 2.0})
    pricer = Pricer({"anthropic": {"claude-sonnet-4-5": price}})
    cost = pricer.cost(account(("anthropic", "claude-sonnet-4-5")))
    assert cost is not None and cost.source == "config"
    assert cost.usd == pytest.approx(0.1 + 0.02)  # cached at the input price when unset


def test_an_unknown_model_has_no_cost_and_makes_the_sum_unknown() -> None:
    cost = Pricer().cost(account(("openai", "gpt-4o-mini"), ("openai", "no-such-model-x")))
    assert cost is not None and (cost.usd, cost.source) == (None, "unknown")
    assert cost.to_json() == {"usd": None, "source": "unknown"}


def test_the_offline_models_cost_nothing_and_an_empty_account_nothing_at_all() -> None:
    cost = Pricer().cost(account(("demo", "gth-demo (offline)"), ("fake", "scripted")))
    assert cost is not None and (cost.usd, cost.source) == (0.0, "offline")
    assert Pricer().cost(UsageAccount()) is None


@pytest.mark.parametrize(
    "bad",
    [
        {"inputPerMTok": 1.0},
        {"inputPerMTok": -1.0, "outputPerMTok": 1.0},
        {"inputPerMTok": "3", "outputPerMTok": 1.0},
        {"inputPerMTok": 1.0, "outputPerMTok": 1.0, "cachedPerMTok": 0.1},
    ],
)
def test_a_bad_price_is_refused_with_its_path(bad: dict[str, object]) -> None:
    from gth_jupyter.config.gth_config import GthConfig

    with pytest.raises(ValueError, match=r"pricing\.anthropic\.m"):
        GthConfig.model_validate({"pricing": {"anthropic": {"m": bad}}})
