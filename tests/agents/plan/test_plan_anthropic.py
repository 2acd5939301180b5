"""Plan proposals through the real anthropic SDK against the strict fake Messages API:
every request must be one the real API accepts (tool schema, tool_result pairing)."""

from __future__ import annotations

from agents.events import MessageEvent
from tests.agents.helpers import claude
from tests.agents.plan.helpers import PlanHarness, plan_of, proposed, workflow
from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply, tool_reply

INTAKE = workflow(
    "intake", "Referral intake", ["Post the referral to the EHR"], outputs=["referral"]
)
COVERAGE = workflow(
    "coverage", "Coverage check", ["Ask the insurer"], after=["intake"], inputs=["referral"]
)


async def test_a_proposal_is_one_accepted_request_with_the_plan_tool(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(tool_reply(("propose_plan", plan_of(INTAKE, COVERAGE))))
    harness = PlanHarness(claude(fake_anthropic))
    _, events = await harness.start("Intake, then coverage after intake.")
    assert proposed(events).plan.order == ["intake", "coverage"]
    (request,) = fake_anthropic.requests
    assert [t["name"] for t in request.tools] == ["propose_plan"]
    # the system prompt's breakpoint caches the tool before it
    assert request.system[-1]["cache_control"] == {"type": "ephemeral"}
    assert (
        "<user_message>\nIntake, then coverage after intake.\n</user_message>"
        in (request.messages[-1]["content"][0]["text"])
    )


async def test_a_plan_that_does_not_hold_is_answered_with_a_paired_error_result(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    cyclic = plan_of(
        workflow("a", "A", ["Post it"], after=["b"]), workflow("b", "B", ["Post it"], after=["a"])
    )
    fake_anthropic.queue(
        tool_reply(("propose_plan", cyclic)),
        tool_reply(("propose_plan", plan_of(INTAKE))),
    )
    harness = PlanHarness(claude(fake_anthropic))
    _, events = await harness.start("the spec")
    assert [w.key for w in proposed(events).plan.workflows] == ["intake"]
    retry = fake_anthropic.requests[1]
    use = retry.messages[-2]["content"][-1]
    result = retry.messages[-1]["content"][0]
    assert use["type"] == "tool_use" and result["tool_use_id"] == use["id"]
    assert result["is_error"] is True and "dependency_cycle" in result["content"]


async def test_feedback_is_a_fresh_request_carrying_the_plan_under_review(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(("propose_plan", plan_of(INTAKE, COVERAGE))),
        tool_reply(("propose_plan", plan_of(INTAKE))),
    )
    harness = PlanHarness(claude(fake_anthropic))
    turn_id, _ = await harness.start("the spec")
    events = await harness.answer(turn_id, False, feedback="Drop the coverage check.")
    assert [w.key for w in proposed(events).plan.workflows] == ["intake"]
    revision = fake_anthropic.requests[1]
    (message,) = revision.messages
    text = message["content"][0]["text"]
    assert '"coverage"' in text and "Drop the coverage check." in text


async def test_a_refusal_stop_is_the_answer_and_nothing_is_stored(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(text_reply("I can't help with that.", stop_reason="refusal"))
    harness = PlanHarness(claude(fake_anthropic))
    _, events = await harness.start("the spec")
    (message,) = [e for e in events if isinstance(e, MessageEvent)]
    assert message.text == "I can't help with that."
    assert harness.workspace.records == []


async def test_a_plan_follow_up_sends_the_plan_conversation_before_its_message(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    """Plan and project turns send the session's history like every other mode, so
    "the second workflow" means the one the conversation planned."""
    spec = "Intake takes referrals; then a coverage check after intake."
    built = "I planned and built 2 workflows: 1. Referral intake, 2. Coverage check."
    history = [{"role": "user", "content": spec}, {"role": "assistant", "content": built}]
    fake_anthropic.queue(text_reply("Which fax service should the fallback use?"))
    harness = PlanHarness(claude(fake_anthropic))
    follow_up = "now add a fax fallback to the second workflow"
    await harness.start(follow_up, history=history, mode=None)
    (request,) = fake_anthropic.requests
    first, answer, current = request.messages
    assert (first["role"], answer["role"], current["role"]) == ("user", "assistant", "user")
    assert first["content"] == spec  # the earlier turns, as they were said
    assert answer["content"][-1] == {
        "type": "text",
        "text": built,
        "cache_control": {"type": "ephemeral"},  # where the next turn's cache read ends
    }
    assert follow_up in current["content"][-1]["text"]
    assert fake_anthropic.rejected == []
