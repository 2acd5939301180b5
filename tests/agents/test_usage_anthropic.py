"""Usage and cost through the real anthropic SDK against the fake Messages API: the
SDK's usage object (cache tokens too) of router, planner and code calls lands per call."""

from __future__ import annotations

import pytest

from agents.usage import DEFAULT_PRICES
from tests.agents.helpers import claude, run
from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply, tool_reply


def _tokens(i: int, o: int, cw: int, cr: int) -> dict[str, int]:
    return {
        "input_tokens": i,
        "output_tokens": o,
        "cache_creation_input_tokens": cw,
        "cache_read_input_tokens": cr,
    }


async def test_every_call_of_a_claude_turn_is_recorded_with_cache_tokens_and_cost(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(
            ("route", {"destination": "planner", "confidence": 5}),
            usage=_tokens(210, 15, 0, 0),
        ),
        tool_reply(("call_job_code_agent", {"job_key": "check", "message": "write it"})),
        tool_reply(
            ("edit_job_code", {"edits": [{"action": "rewrite", "new_code": "get('/c');\n"}]}),
            usage=_tokens(320, 44, 1500, 2500),
        ),
        text_reply("Wrote the coverage check."),
    )
    outcome = await run(claude(fake_anthropic), "write its code", page="job", job_key="check")
    usage = outcome.last["usage"]
    router, planner_1, code, planner_2 = usage["calls"]
    assert [c["role"] for c in usage["calls"]] == ["router", "planner", "job_code", "planner"]
    assert [c["model"] for c in usage["calls"]] == [
        "claude-haiku-4-5",
        "claude-opus-4-5",
        "claude-sonnet-4-6",
        "claude-opus-4-5",
    ]
    # Exactly what the API reported, and priced from the default table.
    assert (router["input_tokens"], router["output_tokens"]) == (210, 15)
    assert router["cost_usd"] == pytest.approx((210 * 1 + 15 * 5) / 1e6)
    assert (code["cache_creation_input_tokens"], code["cache_read_input_tokens"]) == (1500, 2500)
    assert code["cost_usd"] == pytest.approx((320 * 3 + 44 * 15 + 1500 * 3.75 + 2500 * 0.3) / 1e6)
    # What the first planner call wrote to the cache, the second reads.
    assert planner_1["cache_creation_input_tokens"] > 0
    assert planner_2["cache_read_input_tokens"] >= planner_1["cache_creation_input_tokens"]
    for call in (planner_1, planner_2):
        prompt = sum(call[k] for k in ("input_tokens", "cache_creation_input_tokens"))
        assert prompt + call["cache_read_input_tokens"] > 0 and call["output_tokens"] > 0
        opus = DEFAULT_PRICES["claude-opus-4-5"]
        assert call["cost_usd"] == pytest.approx(
            (
                call["input_tokens"] * opus.input
                + call["output_tokens"] * opus.output
                + call["cache_creation_input_tokens"] * opus.cache_write
                + call["cache_read_input_tokens"] * opus.cache_read
            )
            / 1e6
        )
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens"):
        assert usage[key] == sum(c[key] for c in usage["calls"])
    assert usage["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in usage["calls"]))


async def test_a_stream_cut_off_mid_way_still_counts_what_it_billed(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    """The input of a stream that started is billed even when an error event ends it:
    the failed call is recorded with those tokens, and a retried call counts both."""
    from agents.models.base import ModelRequest, ModelUnavailableError
    from agents.usage import RecordingModel, UsageLedger
    from tests.fakes.anthropic_server import stream_error_reply

    request = ModelRequest(
        role="planner",
        system="You plan.",
        messages=[{"role": "user", "content": "hello"}],
    )
    ledger = UsageLedger()
    recording = RecordingModel(claude(fake_anthropic), ledger, DEFAULT_PRICES)

    fake_anthropic.queue(text_reply("one clean answer"))
    clean = await recording.create(request)
    one_input = clean.usage.input_tokens
    assert one_input > 0

    fake_anthropic.queue(stream_error_reply(), text_reply("after a retry"))
    retried = await recording.create(request)
    assert retried.usage.input_tokens == 2 * one_input  # both streams were billed

    fake_anthropic.queue(stream_error_reply(), stream_error_reply())
    with pytest.raises(ModelUnavailableError):
        await recording.create(request)
    failed = ledger.calls[-1]
    assert failed.error == "model_unavailable"
    assert failed.input_tokens == 2 * one_input
    assert failed.cost_usd is not None and failed.cost_usd > 0
