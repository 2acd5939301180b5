"""The default price table: genai-prices' data, our own only for the ids it lacks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from agents.models.base import Usage
from agents.models.catalog import offered_model_ids
from agents.usage import (
    DEFAULT_PRICES,
    PRICE_OVERRIDES,
    ModelPrice,
    Rates,
    call_cost,
    default_prices,
    price_for,
)

# Anthropic's published list prices, USD per million tokens: input, output, 5-minute
# cache write, cache read (platform.claude.com/docs/en/about-claude/pricing, 2026-12).
PUBLISHED = {
    "claude-opus-4-5": (5, 25, 6.25, 0.50),
    "claude-sonnet-4-6": (3, 15, 3.75, 0.30),
    "claude-haiku-4-5": (1, 5, 1.25, 0.10),
    "claude-opus-5-5": (4, 20, 5, 0.20),
    "claude-fable-5-2": (8, 40, 10, 0.20),
}


def test_every_catalogued_model_id_gets_a_price() -> None:
    offered = offered_model_ids()
    assert offered
    assert [model for model in offered if price_for(model, DEFAULT_PRICES) is None] == []


@pytest.mark.parametrize(("model", "rates"), PUBLISHED.items())
def test_prices_match_anthropics_published_list_prices(
    model: str, rates: tuple[float, float, float, float]
) -> None:
    price = price_for(model, DEFAULT_PRICES)
    assert price is not None
    assert (price.input, price.output, price.cache_write, price.cache_read) == rates


def test_our_table_only_covers_what_the_library_lacks() -> None:
    library = default_prices()
    for model in PRICE_OVERRIDES:
        if model.startswith("claude-"):  # not in genai-prices: priced by us
            with pytest.raises(LookupError):
                calc_price(PriceUsage(input_tokens=1), model_ref=model, provider_id="anthropic")
    assert library["claude-mythos-5"] == PRICE_OVERRIDES["claude-mythos-5"]


def test_a_long_prompt_tier_comes_through_and_bills_every_token_at_it() -> None:
    haiku = DEFAULT_PRICES["claude-haiku-5-5"]
    assert haiku.long_prompt_threshold == 100_000
    assert haiku.long_prompt == Rates(input=0.5, output=2.5, cache_write=0.625, cache_read=0.05)
    short = Usage(input_tokens=100_000, output_tokens=1_000)
    long = Usage(input_tokens=100_001, output_tokens=1_000)
    assert call_cost("claude-haiku-5-5", short, DEFAULT_PRICES) == pytest.approx(0.0105)
    assert call_cost("claude-haiku-5-5", long, DEFAULT_PRICES) == pytest.approx(0.0525005)


def test_a_price_that_changed_over_time_is_the_one_in_force_then() -> None:
    """genai-prices dates its prices: before 13 March 2026 Sonnet 4.6 billed prompts over
    200k tokens higher; the table built for that day says so, today's does not."""
    then = default_prices(datetime(2026, 3, 1, tzinfo=UTC))["claude-sonnet-4-6"]
    assert then.long_prompt_threshold == 200_000
    assert then.long_prompt is not None and then.long_prompt.input == 6
    now = DEFAULT_PRICES["claude-sonnet-4-6"]
    assert now == ModelPrice(input=3, output=15, cache_write=3.75, cache_read=0.3)
