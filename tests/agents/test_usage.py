"""Usage and cost (DESIGN §5b): every model call recorded, priced and summed per turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.events import ModelCallUsage, TurnUsage
from agents.graph import build_graph
from agents.models import ModelError, ModelRequest, ModelResponse, ScriptedModel
from agents.models.base import Usage
from agents.runner import TurnRunner
from agents.usage import (
    DEFAULT_PRICES,
    ModelPrice,
    Rates,
    UsageLedger,
    call_cost,
    cost_breakdown,
    price_for,
)
from tests.agents.helpers import resume, run, runtime_for

S = ScriptedModel
PRICES = {
    "cheap": ModelPrice(input=1, output=5, cache_write=1.25, cache_read=0.1),
    "dear": ModelPrice(input=5, output=25, cache_write=6.25, cache_read=0.5),
}


def _usage(i: int = 0, o: int = 0, cw: int = 0, cr: int = 0) -> Usage:
    return Usage(
        input_tokens=i, output_tokens=o, cache_creation_input_tokens=cw, cache_read_input_tokens=cr
    )


# -- prices ------------------------------------------------------------------------------


def test_each_kind_of_token_is_billed_at_its_own_rate() -> None:
    usage = _usage(i=1_000_000, o=200_000, cw=400_000, cr=2_000_000)
    # 5 + 0.2 * 25 + 0.4 * 6.25 + 2 * 0.5
    assert call_cost("dear", usage, PRICES) == pytest.approx(13.5)
    parts = cost_breakdown("dear", usage, PRICES)
    assert parts == pytest.approx(
        {
            "input_tokens": 5.0,
            "output_tokens": 5.0,
            "cache_creation_input_tokens": 2.5,
            "cache_read_input_tokens": 1.0,
            "total": 13.5,
        }
    )


def test_a_dated_snapshot_is_priced_as_its_alias_and_an_unknown_model_is_unknown() -> None:
    assert (
        price_for("claude-haiku-4-5-20251001", DEFAULT_PRICES) is DEFAULT_PRICES["claude-haiku-4-5"]
    )
    assert call_cost("claude-opus-4-5-20251101", _usage(i=1000), DEFAULT_PRICES) == 0.005
    assert price_for("my-fine-tune", DEFAULT_PRICES) is None
    assert call_cost("my-fine-tune", _usage(i=1000), DEFAULT_PRICES) is None


def test_the_default_table_prices_the_default_models_and_the_offline_ones_free() -> None:
    from agents.models.factory import DEFAULT_MODEL_IDS

    for model in DEFAULT_MODEL_IDS.values():
        price = price_for(model, DEFAULT_PRICES)
        assert price is not None and price.input > 0 and price.output > price.input
        # The documented multipliers: 5-minute writes 1.25x, reads at most 0.1x input.
        assert price.cache_write == pytest.approx(price.input * 1.25)
        assert price.cache_read <= price.input * 0.1 + 1e-12
    big = _usage(i=10**6, o=10**6, cw=10**6, cr=10**6)
    assert call_cost("offline", big, DEFAULT_PRICES) == 0.0
    assert call_cost("scripted", big, DEFAULT_PRICES) == 0.0


def test_a_long_prompt_tier_bills_every_token_of_that_request_higher() -> None:
    tiered = {
        "m": ModelPrice(
            input=1,
            output=2,
            cache_write=1,
            cache_read=0.1,
            long_prompt_threshold=100,
            long_prompt=Rates(input=10, output=20, cache_write=10, cache_read=1),
        )
    }
    assert call_cost("m", _usage(i=60, cr=40, o=1_000), tiered) == pytest.approx(0.002064)
    # 101 prompt tokens (input + cache) cross the threshold: all at the long rates.
    assert call_cost("m", _usage(i=60, cr=41, o=1_000), tiered) == pytest.approx(0.020641)


def test_turn_totals_sum_the_calls_and_any_unpriced_call_makes_the_cost_unknown() -> None:
    ledger = UsageLedger()
    assert ledger.totals() == TurnUsage()

    ledger.add(ModelCallUsage(role="router", model="a", input_tokens=3, cost_usd=0.25))
    ledger.add(ModelCallUsage(role="planner", model="b", cache_read_input_tokens=4, cost_usd=0.5))
    totals = ledger.totals()
    assert (totals.input_tokens, totals.cache_read_input_tokens, totals.cost_usd) == (3, 4, 0.75)
    ledger.add(ModelCallUsage(role="job_code", model="c", output_tokens=1, cost_usd=None))
    assert ledger.totals().cost_usd is None and ledger.totals().output_tokens == 1


# -- through the graph -------------------------------------------------------------------


def _code_reply(request: ModelRequest) -> ModelResponse:
    return S.tool_calls(
        ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": "get('/c');\n"}]}),
        usage=_usage(i=300, o=40, cr=1000),
        model="cheap",
    )


def _router_to_planner() -> ModelResponse:
    return S.tool_calls(
        ("route", {"destination": "planner", "confidence": 5}),
        usage=_usage(i=200, o=10),
        model="cheap",
    )


async def test_router_planner_and_code_sub_agent_calls_are_each_recorded_and_priced() -> None:
    model = ScriptedModel(
        {
            "router": [_router_to_planner()],
            "planner": [
                S.tool_calls(
                    ("call_job_code_agent", {"job_key": "check", "message": "write it"}),
                    usage=_usage(i=1000, o=100, cw=5000),
                    model="dear",
                ),
                S.text("Done.", usage=_usage(i=1200, o=30, cr=5000), model="dear"),
            ],
            "job_code": [_code_reply],
        }
    )
    outcome = await run(
        model, "write the check step's code", page="job", job_key="check", config={"prices": PRICES}
    )
    usage = outcome.last["usage"]
    calls = usage["calls"]
    assert [c["role"] for c in calls] == ["router", "planner", "job_code", "planner"]
    assert [c["model"] for c in calls] == ["cheap", "dear", "cheap", "dear"]
    assert usage["input_tokens"] == 200 + 1000 + 300 + 1200
    assert usage["output_tokens"] == 10 + 100 + 40 + 30
    assert usage["cache_creation_input_tokens"] == 5000
    assert usage["cache_read_input_tokens"] == 1000 + 5000
    expected = [
        (200 * 1 + 10 * 5) / 1e6,
        (1000 * 5 + 100 * 25 + 5000 * 6.25) / 1e6,
        (300 * 1 + 40 * 5 + 1000 * 0.1) / 1e6,
        (1200 * 5 + 30 * 25 + 5000 * 0.5) / 1e6,
    ]
    assert [c["cost_usd"] for c in calls] == pytest.approx(expected)
    assert usage["cost_usd"] == pytest.approx(sum(expected))
    # Each call names the prompt it was made with; the turn knows every template it used.
    assert [c["prompt_name"] for c in calls] == ["router", "planner", "job_code", "planner"]
    assert all(c["prompt_version"] and c["prompt_hash"] for c in calls)
    prompts = outcome.runtime.usage.prompts
    assert {"router", "planner", "planner_user", "job_code", "job_code_user"} <= set(prompts)
    assert prompts["planner"].hash == calls[1]["prompt_hash"]


async def test_the_direct_code_route_records_router_and_code_calls() -> None:
    model = ScriptedModel(
        {
            "router": [
                S.tool_calls(
                    ("route", {"destination": "job_code", "job_key": "check", "confidence": 5}),
                    usage=_usage(i=150, o=12),
                    model="cheap",
                )
            ],
            "job_code": [_code_reply],
        }
    )
    outcome = await run(
        model, "fix this code", page="job", job_key="check", config={"prices": PRICES}
    )
    calls = outcome.last["usage"]["calls"]
    assert [(c["role"], c["input_tokens"]) for c in calls] == [("router", 150), ("job_code", 300)]


async def test_a_failed_turn_keeps_the_usage_of_the_calls_it_made() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(("update_workflow", {"name": "Intake"}), usage=_usage(i=700, o=50)),
            ModelError("the model gave up"),
        ]
    )
    rt = runtime_for(model)
    with pytest.raises(ModelError):
        await run(model, "rename it", runtime=rt)
    calls = rt.usage.calls
    assert [(c.role, c.input_tokens, c.error) for c in calls] == [
        ("planner", 700, None),
        ("planner", 0, "model_error"),
    ]
    assert rt.usage.totals().input_tokens == 700 and rt.usage.totals().cost_usd == 0.0


async def test_a_cancelled_turn_keeps_the_usage_of_its_finished_calls() -> None:
    started = asyncio.Event()

    async def stuck(request: ModelRequest) -> ModelResponse:
        started.set()
        await asyncio.sleep(30)
        raise AssertionError("not cancelled")

    model = ScriptedModel(
        [S.tool_calls(("update_workflow", {"name": "Intake"}), usage=_usage(i=500, o=9)), stuck]
    )
    rt = runtime_for(model)
    task = asyncio.create_task(run(model, "rename it", runtime=rt))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [(c.input_tokens, c.error) for c in rt.usage.calls] == [(500, None), (0, "cancelled")]


async def test_a_resumed_turn_counts_the_calls_made_before_its_pause() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(("remove_jobs", {"keys": ["fetch"]}), usage=_usage(i=800, o=20)),
            S.text("Removed it.", usage=_usage(i=900, o=10)),
        ]
    )
    saver = InMemorySaver()
    paused = await run(model, "remove the fetch step", checkpointer=saver)
    assert paused.last["type"] == "confirm.required"
    # Another process resumes: a fresh runtime, its ledger seeded from the stored calls.
    rt = runtime_for(model)
    rt.usage = UsageLedger.resumed(paused.runtime.usage.unsaved())
    runner = TurnRunner(build_graph(saver))
    events: list[dict[str, Any]] = [e.wire() async for e in runner.resume("turn-1", True, rt)]
    usage = events[-1]["usage"]
    assert [c["input_tokens"] for c in usage["calls"]] == [800, 900]
    assert usage["input_tokens"] == 1700
    assert [c.input_tokens for c in rt.usage.unsaved()] == [900]  # only the new one to store


async def test_resuming_in_the_same_runtime_counts_both_segments() -> None:
    model = ScriptedModel(
        [
            S.tool_calls(("remove_jobs", {"keys": ["fetch"]}), usage=_usage(i=800)),
            S.text("Removed it.", usage=_usage(i=900)),
        ]
    )
    paused = await run(model, "remove the fetch step")
    done = await resume(paused, True)
    assert done.last["usage"]["input_tokens"] == 1700
