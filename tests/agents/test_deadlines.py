"""Deadlines through the graph, the real SDK and the strict fake: a retry-after longer
than the cap fails the call at once; a turn past its deadline stops, keeping what it
committed; a retry-after that would outlast the deadline is not waited out."""

from __future__ import annotations

import time

import pytest

from agents.models import AnthropicModel
from agents.models.deadline import (
    Deadline,
    RetryWaitTooLongError,
    TurnDeadlineError,
)
from tests.agents.helpers import BASE_YAML, CLAUDE_MODELS, run, runtime_for
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    delay_reply,
    overloaded_reply,
    rate_limit_reply,
    text_reply,
    tool_reply,
)


def claude(
    server: FakeAnthropicServer, *, max_wait_s: float = 5.0, max_retries: int = 3
) -> AnthropicModel:
    return AnthropicModel(
        models=CLAUDE_MODELS,
        api_key="sk-test-key",
        base_url=server.base_url,
        timeout=10.0,
        max_retries=max_retries,
        max_wait_s=max_wait_s,
    )


@pytest.mark.parametrize("reply", [rate_limit_reply, overloaded_reply], ids=["429", "529"])
async def test_a_retry_after_past_the_cap_fails_the_call_at_once(
    fake_anthropic: FakeAnthropicServer, reply: object
) -> None:
    fake_anthropic.queue(reply(retry_after=3600))  # type: ignore[operator]
    model = claude(fake_anthropic, max_wait_s=5)
    started = time.monotonic()
    with pytest.raises(RetryWaitTooLongError) as info:
        await run(model, "rename the workflow to Intake", config={"turn_deadline_s": 60})
    assert time.monotonic() - started < 3  # not an hour, and no retry either
    assert info.value.code == "retry_after_too_long"
    assert info.value.details["retry_after_s"] == 3600
    assert "3600 s" in info.value.message and "5 s allowed" in info.value.message
    assert len(fake_anthropic.requests) == 1
    await model.aclose()


async def test_a_retry_after_within_the_cap_is_waited_out(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(rate_limit_reply(retry_after=0.3), text_reply("Hello."))
    model = claude(fake_anthropic, max_wait_s=5)
    started = time.monotonic()
    outcome = await run(model, "hi", config={"turn_deadline_s": 60})
    assert time.monotonic() - started >= 0.3
    assert outcome.of("message")[-1]["text"] == "Hello."
    assert len(fake_anthropic.requests) == 2
    await model.aclose()


async def test_a_retry_after_past_what_is_left_of_the_deadline_ends_the_turn(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(rate_limit_reply(retry_after=4))  # under the cap, over the deadline
    model = claude(fake_anthropic, max_wait_s=30)
    started = time.monotonic()
    with pytest.raises(TurnDeadlineError) as info:
        await run(model, "hi", config={"turn_deadline_s": 2})
    assert time.monotonic() - started < 1.5  # refused when asked, not slept until the end
    assert info.value.code == "turn_deadline"
    assert "asked to wait 4 s" in info.value.message
    await model.aclose()


async def test_a_slow_model_past_the_deadline_ends_the_turn_and_keeps_what_was_committed(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(("update_workflow", {"name": "Intake"})),
        delay_reply(30, text_reply("too late")),
    )
    model = claude(fake_anthropic)
    rt = runtime_for(model, turn_deadline_s=1.5)
    started = time.monotonic()
    with pytest.raises(TurnDeadlineError) as info:
        await run(model, "rename it to Intake", runtime=rt)
    assert 1.0 < time.monotonic() - started < 4
    assert "time limit of 1.5 s" in info.value.message
    versions = rt.committer.versions  # type: ignore[attr-defined]
    assert [v["tool"] for v in versions] == ["update_workflow"]  # the committed change stays
    assert "name: Intake" in versions[-1]["yaml"] and versions[-1]["yaml"] != BASE_YAML
    # the stopped call is in the ledger with its code
    assert [c.error for c in rt.usage.calls if c.role == "planner"] == [None, "turn_deadline"]
    await model.aclose()


async def test_a_call_after_the_deadline_is_refused_without_a_request(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    now = [0.0]
    model = claude(fake_anthropic)
    rt = runtime_for(model)
    rt.deadline = Deadline(10, clock=lambda: now[0])
    now[0] = 11.0
    with pytest.raises(TurnDeadlineError):
        await run(model, "hi", runtime=rt)
    assert fake_anthropic.requests == []
    await model.aclose()


def test_a_deadline_counts_down_on_its_clock() -> None:
    now = [100.0]
    deadline = Deadline(5, clock=lambda: now[0])
    assert deadline.remaining() == 5
    now[0] = 104.0
    assert deadline.remaining() == pytest.approx(1)
    deadline.check()
    now[0] = 105.0
    with pytest.raises(TurnDeadlineError):
        deadline.check()
    assert Deadline(None).remaining() is None
