"""Usage and cost of a turn's model calls (DESIGN §5b).

Every model call of a turn (router, planner, code sub-agents) goes through
:class:`RecordingModel`, which :meth:`agents.runtime.TurnRuntime.model` hands
out, and lands in the turn's :class:`UsageLedger` the moment it returns (or
fails). The ledger lives on the run-scoped runtime, not in the checkpointed
state, so what a failed or cancelled run spent is still there when the graph
raises; the service persists its calls at the end of every run segment and
seeds a resumed turn's ledger with the calls stored before the pause.

Cost comes from a per-model :class:`ModelPrice` table (USD per million tokens;
the service's settings hold it), built from genai-prices' data with our own
:data:`PRICE_OVERRIDES` for the ids it lacks. Anthropic's ``input_tokens`` excludes cached
tokens: a call's whole prompt is ``input + cache_creation + cache_read``, each
billed at its own rate. A model the table does not know is priced ``None``
(unknown), never silently 0; the offline and scripted models cost 0.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from genai_prices import data_snapshot
from genai_prices.types import TieredPrices
from pydantic import BaseModel, ConfigDict, NonNegativeFloat, PositiveInt

from agents.events import ModelCallUsage, TurnUsage
from agents.models.base import ChatModel, ModelRequest, ModelResponse, TextSink, Usage
from agents.models.catalog import api_model_id, offered_model_ids
from tools.errors import PlanwrightError

__all__ = [
    "DEFAULT_PRICES",
    "PRICE_OVERRIDES",
    "ModelPrice",
    "PromptUse",
    "RecordingModel",
    "UsageLedger",
    "call_cost",
    "cost_breakdown",
    "default_prices",
    "price_for",
]

logger = logging.getLogger(__name__)

_SNAPSHOT_SUFFIX = re.compile(r"-\d{8}$")
_MTOK = 1_000_000
_UNPRICED: set[str] = set()


class Rates(BaseModel):
    """USD per million tokens of each kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: NonNegativeFloat
    """Uncached input tokens."""
    output: NonNegativeFloat
    """Output tokens (thinking included)."""
    cache_write: NonNegativeFloat
    """Cache writes with the default 5-minute lifetime (the only one Planwright uses)."""
    cache_read: NonNegativeFloat
    """Cache hits and refreshes."""


class ModelPrice(Rates):
    """One model's list price; ``long_prompt`` for models that bill long prompts higher.

    A request whose prompt (input + cache writes + cache reads) is over
    ``long_prompt_threshold`` tokens pays ``long_prompt`` rates on every token,
    output included (Haiku 5.5's published tier).
    """

    long_prompt_threshold: PositiveInt | None = None
    long_prompt: Rates | None = None


def _price(
    input: float, output: float, cache_write: float, cache_read: float, **extra: Any
) -> ModelPrice:
    return ModelPrice(
        input=input, output=output, cache_write=cache_write, cache_read=cache_read, **extra
    )


_FREE = _price(0, 0, 0, 0)

# Ours only where genai-prices (the maintained price data, pinned) has no entry: the
# offline and scripted models, and the ids it does not list yet, at Anthropic's published
# list prices (platform.claude.com/docs/en/about-claude/pricing, checked 2026-12).
PRICE_OVERRIDES: Mapping[str, ModelPrice] = {
    "offline": _FREE,
    "scripted": _FREE,
    "claude-mythos-5-1": _price(10, 50, 12.50, 0.25),  # as claude-fable-5-1
    "claude-mythos-5": _price(10, 50, 12.50, 1.00),  # as claude-fable-5
}


def _rate(value: Decimal | TieredPrices | None) -> Decimal | None:
    return value.base if isinstance(value, TieredPrices) else value


def _published(model: str, when: datetime) -> ModelPrice | None:
    """genai-prices' Anthropic price of ``model`` at ``when`` (its first long-prompt tier
    as ``long_prompt``), or None when it does not list the model."""
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, "anthropic", None)
    except LookupError:
        return None
    listed = info.get_prices(when)
    fields = {
        "input": listed.input_mtok,
        "output": listed.output_mtok,
        "cache_write": listed.cache_write_mtok,
        "cache_read": listed.cache_read_mtok,
    }
    base = {name: _rate(value) for name, value in fields.items()}
    if base["input"] is None or base["output"] is None:
        return None
    base["cache_write"] = base["cache_write"] if base["cache_write"] is not None else base["input"]
    base["cache_read"] = base["cache_read"] if base["cache_read"] is not None else base["input"]
    tiers = {n: v.tiers[0] for n, v in fields.items() if isinstance(v, TieredPrices) and v.tiers}
    long_prompt: dict[str, Any] = {}
    if tiers:
        start = min(tier.start for tier in tiers.values())
        rates = {n: tiers[n].price if n in tiers else base[n] for n in base}
        long_prompt = {"long_prompt_threshold": start, "long_prompt": Rates.model_validate(rates)}
    return ModelPrice.model_validate({**base, **long_prompt})


def default_prices(when: datetime | None = None) -> dict[str, ModelPrice]:
    """The price of every model id the installed SDK still offers (dated snapshots go by
    their alias, Bedrock and Vertex ids by the API id they name: :func:`price_for`), from
    genai-prices at ``when`` (default now), with :data:`PRICE_OVERRIDES` over it."""
    at = when or datetime.now(UTC)
    prices: dict[str, ModelPrice] = {}
    for model in dict.fromkeys(_SNAPSHOT_SUFFIX.sub("", i) for i in offered_model_ids()):
        if (price := _published(model, at)) is not None:
            prices[model] = price
    return {**prices, **PRICE_OVERRIDES}


# Override or extend with PLANWRIGHT_MODEL_PRICES.
DEFAULT_PRICES: Mapping[str, ModelPrice] = default_prices()


def price_for(model: str, prices: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model``: by exact id, else by its alias (date suffix dropped); a
    Bedrock or Vertex id by the Claude API id it names."""
    for candidate in (model, api_model_id(model)):
        price = prices.get(candidate)
        if price is None:
            price = prices.get(_SNAPSHOT_SUFFIX.sub("", candidate))
        if price is not None:
            return price
    return None


def cost_breakdown(
    model: str, usage: Usage, prices: Mapping[str, ModelPrice]
) -> dict[str, float] | None:
    """One call's cost in USD per usage field (the ``Usage`` field names) plus ``total``,
    or ``None`` when ``model`` has no price."""
    price = price_for(model, prices)
    if price is None:
        return None
    rates: Rates = price
    prompt = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    if price.long_prompt is not None and prompt > (price.long_prompt_threshold or prompt):
        rates = price.long_prompt
    parts = {
        "input_tokens": usage.input_tokens * rates.input,
        "output_tokens": usage.output_tokens * rates.output,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens * rates.cache_write,
        "cache_read_input_tokens": usage.cache_read_input_tokens * rates.cache_read,
    }
    costs = {key: round(micro / _MTOK, 10) for key, micro in parts.items()}
    return {**costs, "total": round(sum(parts.values()) / _MTOK, 10)}


def call_cost(model: str, usage: Usage, prices: Mapping[str, ModelPrice]) -> float | None:
    """What one call cost in USD, or ``None`` when ``model`` has no price."""
    costs = cost_breakdown(model, usage, prices)
    return None if costs is None else costs["total"]


class PromptUse(BaseModel):
    """A prompt template a turn used: its name, version and content hash."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str
    hash: str


@dataclass
class UsageLedger:
    """The model calls of one turn, in the order they returned.

    ``calls[:saved]`` are already persisted (a resumed turn starts with the
    calls stored before its pause); :meth:`unsaved` hands out the rest.
    ``prompts`` maps each prompt template the turn loaded (by role, e.g.
    ``planner``, ``planner_user``) to its name, version and hash.
    """

    calls: list[ModelCallUsage] = field(default_factory=list)
    prompts: dict[str, PromptUse] = field(default_factory=dict)
    saved: int = 0

    @classmethod
    def resumed(cls, calls: Iterable[ModelCallUsage]) -> UsageLedger:
        """A ledger continuing a turn whose earlier calls are stored already."""
        earlier = list(calls)
        return cls(calls=earlier, saved=len(earlier))

    def add(self, call: ModelCallUsage) -> None:
        self.calls.append(call)

    def use_prompt(self, role: str, name: str, version: str, hash: str) -> None:
        self.prompts[role] = PromptUse(name=name, version=version, hash=hash)

    def unsaved(self) -> list[ModelCallUsage]:
        """Calls not yet persisted (:meth:`mark_saved` once they are)."""
        return self.calls[self.saved :]

    def mark_saved(self, count: int) -> None:
        self.saved += count

    def totals(self) -> TurnUsage:
        """Every call of the turn summed, with the cost (``None`` if any call is unpriced)."""
        return TurnUsage.of(self.calls)


class RecordingModel:
    """A :class:`ChatModel` that adds each call, answered or failed, to the ledger."""

    def __init__(
        self,
        inner: ChatModel,
        ledger: UsageLedger,
        prices: Mapping[str, ModelPrice],
    ) -> None:
        self.inner, self.ledger, self.prices = inner, ledger, prices
        self.name = inner.name

    async def create(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        try:
            response = await self.inner.create(request, on_text=on_text)
        except BaseException as exc:
            # The call was made and failed: a stream cut off mid-way (an error event, a
            # cancel) has already billed its input; the client says how much on the error.
            spent = getattr(exc, "spent_usage", None)
            usage = spent if isinstance(spent, Usage) else Usage()
            model = getattr(exc, "spent_model", None) or self.inner.name
            self._record(request, usage, model, _error_code(exc))
            raise
        self._record(request, response.usage, response.model or self.inner.name, None)
        return response

    def _record(self, request: ModelRequest, usage: Usage, model: str, error: str | None) -> None:
        cost = call_cost(model, usage, self.prices)
        if cost is None and model not in _UNPRICED:
            _UNPRICED.add(model)  # once per model id, not once per call
            logger.warning("no price for model %r: cost of its calls is unknown", model)
        self.ledger.add(
            ModelCallUsage(
                role=request.role,
                model=model,
                **usage.as_dict(),
                cost_usd=cost,
                prompt_name=request.prompt_name,
                prompt_version=request.prompt_version,
                prompt_hash=request.prompt_hash,
                error=error,
            )
        )


def _error_code(exc: BaseException) -> str:
    if isinstance(exc, PlanwrightError):
        return exc.code
    return "cancelled" if isinstance(exc, asyncio.CancelledError) else type(exc).__name__
