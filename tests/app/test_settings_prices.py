"""The price table in settings: Anthropic's list prices by default, extended from the env."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agents.usage import DEFAULT_PRICES
from app.settings import Settings


def test_defaults_are_the_list_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANWRIGHT_MODEL_PRICES", raising=False)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.model_prices == DEFAULT_PRICES
    for model in (settings.router_model, settings.planner_model, settings.job_code_model):
        assert model in settings.model_prices


def test_prices_from_the_environment_add_to_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "PLANWRIGHT_MODEL_PRICES",
        '{"my-model": {"input": 2, "output": 8, "cache_write": 2.5, "cache_read": 0.2},'
        ' "claude-opus-4-5": {"input": 4, "output": 20, "cache_write": 5, "cache_read": 0.4}}',
    )
    prices = Settings(_env_file=None).model_prices  # type: ignore[call-arg]
    assert prices["my-model"].output == 8
    assert prices["claude-opus-4-5"].input == 4  # overridden
    assert prices["claude-haiku-4-5"] == DEFAULT_PRICES["claude-haiku-4-5"]  # kept


def test_a_malformed_price_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANWRIGHT_MODEL_PRICES", '{"m": {"input": -1, "output": 1}}')
    with pytest.raises(ValidationError):
        Settings(_env_file=None)  # type: ignore[call-arg]
