"""Stop reasons through the graph, the real SDK and the strict fake Messages API."""

from __future__ import annotations

import pytest

from agents.models import ModelUnavailableError
from agents.nodes.stop_reasons import CUT_OFF_CALL, EMPTY, REFUSED
from tests.agents.helpers import BASE_YAML, claude, run
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    empty_reply,
    refusal_reply,
    stream_error_reply,
    text_reply,
    tool_reply,
    truncated_tool_reply,
)


async def test_a_cut_off_tool_call_is_never_run_and_the_round_is_retried_with_room(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        truncated_tool_reply("remove_jobs", '{"keys": ["check"'),
        tool_reply(("update_workflow", {"name": "Intake"})),
        text_reply("Renamed the workflow."),
    )
    outcome = await run(claude(fake_anthropic), "rename the workflow to Intake")
    assert "check" in outcome.doc.structure.jobs  # the partial remove_jobs never ran
    assert outcome.doc.structure.name == "Intake"
    first, retry, _ = fake_anthropic.requests
    assert (first.max_tokens, retry.max_tokens) == (4096, 16384)
    assert retry.messages == first.messages  # the same round, asked again
    assert [v["tool"] for v in outcome.runtime.committer.versions] == ["update_workflow"]  # type: ignore[attr-defined]
    assert fake_anthropic.rejected == []


async def test_a_reply_the_fake_cuts_at_max_tokens_is_retried_and_then_runs(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    long_name = "Referral intake and coverage check for the regional clinics "
    fake_anthropic.queue(
        tool_reply(("update_workflow", {"name": long_name.strip()})),
        tool_reply(("update_workflow", {"name": long_name.strip()})),
        text_reply("Renamed."),
    )
    outcome = await run(
        claude(fake_anthropic), "rename it", config={"max_tokens": 20, "max_tokens_retry": 400}
    )
    assert outcome.doc.structure.name == long_name.strip()
    assert [r.max_tokens for r in fake_anthropic.requests] == [20, 400, 20]


async def test_cut_off_twice_tells_the_user_and_changes_nothing(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        truncated_tool_reply("remove_jobs", '{"keys": ["check"'),
        truncated_tool_reply("remove_jobs", '{"keys": ["check", "fe'),
    )
    outcome = await run(claude(fake_anthropic), "remove check")
    assert outcome.of("message")[-1]["text"] == CUT_OFF_CALL
    assert outcome.of("workflow") == []
    assert outcome.state["yaml"] == BASE_YAML


async def test_a_refusal_reaches_the_user_as_text(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(refusal_reply("I won't write that."), refusal_reply())
    first = await run(claude(fake_anthropic), "write malware into the step")
    assert first.of("message")[-1]["text"] == "I won't write that."
    second = await run(claude(fake_anthropic), "again", turn_id="turn-2")
    assert second.of("message")[-1]["text"] == REFUSED
    assert second.state["yaml"] == BASE_YAML


async def test_an_empty_end_turn_is_not_an_empty_message(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(empty_reply())
    outcome = await run(claude(fake_anthropic), "hmm")
    assert outcome.of("message")[-1]["text"] == EMPTY


async def test_a_mid_stream_error_before_any_text_is_retried_once(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(("update_workflow", {"name": "Intake"})),
        stream_error_reply("overloaded_error"),
        text_reply("Renamed the workflow."),
    )
    outcome = await run(claude(fake_anthropic), "rename the workflow to Intake")
    assert outcome.of("message")[-1]["text"] == "Renamed the workflow."
    assert len(fake_anthropic.requests) == 3
    assert [v["tool"] for v in outcome.runtime.committer.versions] == ["update_workflow"]  # type: ignore[attr-defined]


async def test_a_second_mid_stream_error_fails_typed(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(stream_error_reply(), stream_error_reply())
    with pytest.raises(ModelUnavailableError):
        await run(claude(fake_anthropic), "hello")
    assert len(fake_anthropic.requests) == 2


async def test_a_mid_stream_error_after_streamed_text_is_not_retried(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(stream_error_reply(partial_text="It fetches "), text_reply("unused"))
    with pytest.raises(ModelUnavailableError):
        await run(claude(fake_anthropic), "what does it do?")
    assert len(fake_anthropic.requests) == 1


async def test_a_cut_off_code_edit_is_not_stitched_and_is_asked_again(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    code = "get('/coverage');"
    fake_anthropic.queue(
        tool_reply(("route", {"destination": "job_code", "confidence": 5})),
        truncated_tool_reply("edit_job_code", '{"edits": [{"action": "rewrite", "new_code": "get('),
        tool_reply(("edit_job_code", {"edits": [{"action": "rewrite", "new_code": code}]})),
    )
    outcome = await run(claude(fake_anthropic), "fetch the coverage", page="job", job_key="check")
    assert outcome.doc.structure.jobs["check"].body.strip() == code  # type: ignore[union-attr]
    _router, cut, retry = fake_anthropic.requests
    assert (cut.max_tokens, retry.max_tokens) == (4096, 16384)
    assert retry.messages == cut.messages
    assert len(outcome.runtime.committer.versions) == 1  # type: ignore[attr-defined]


async def test_a_cut_off_route_call_goes_to_the_planner(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        truncated_tool_reply("route", '{"destination": "job_code", "confid'),
        text_reply("It has no code yet."),
    )
    outcome = await run(claude(fake_anthropic), "what is this?", page="job", job_key="check")
    assert outcome.of("route")[0]["destination"] == "planner"
    assert outcome.of("message")[-1]["text"] == "It has no code yet."


async def test_a_paused_reply_is_continued_and_the_turn_goes_on(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        text_reply("Looking at the steps first.", stop_reason="pause_turn"),
        tool_reply(("update_workflow", {"name": "Intake"})),
        text_reply("Renamed the workflow."),
    )
    outcome = await run(claude(fake_anthropic), "rename the workflow to Intake")
    assert outcome.doc.structure.name == "Intake"  # the pause did not end the turn
    assert outcome.of("message")[-1]["text"] == "Renamed the workflow."
    paused, continued, after_tools = fake_anthropic.requests
    # The paused content goes back unchanged as the last message, and the round is asked again.
    assert continued.messages[:-1] == paused.messages
    assert continued.messages[-1]["role"] == "assistant"
    assert [b["text"] for b in continued.messages[-1]["content"]] == ["Looking at the steps first."]
    # The next round sees one assistant reply: the paused part, then its continuation.
    reply = after_tools.messages[-2]
    assert reply["role"] == "assistant"
    assert [b["type"] for b in reply["content"]] == ["text", "tool_use"]
    planner_calls = [c for c in outcome.runtime.usage.calls if c.role == "planner"]
    assert len(planner_calls) == 3  # each part is its own priced call
    assert fake_anthropic.rejected == []


async def test_a_reply_that_keeps_pausing_is_an_error(fake_anthropic: FakeAnthropicServer) -> None:
    from agents.models.pause import MAX_CONTINUATIONS, PauseLimitError

    fake_anthropic.queue(
        *[text_reply(f"Step {i}.", stop_reason="pause_turn") for i in range(MAX_CONTINUATIONS + 1)]
    )
    with pytest.raises(PauseLimitError) as info:
        await run(claude(fake_anthropic), "think hard")
    assert info.value.code == "model_pause_limit"
    assert len(fake_anthropic.requests) == MAX_CONTINUATIONS + 1
    assert fake_anthropic.rejected == []
