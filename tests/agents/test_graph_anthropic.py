"""The core turn paths once through the real anthropic SDK against the fake Messages API."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agents.graph import build_graph
from agents.models import ModelTimeoutError, ModelUnavailableError
from agents.runner import TurnRunner
from tests.agents.helpers import BASE_YAML, claude, run, runtime_for, turn
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    delay_reply,
    error_reply,
    text_reply,
    tool_reply,
)


async def test_tool_round_then_streamed_answer(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(
        tool_reply(("update_jobs", {"jobs": [{"key": "check", "name": "Verify coverage"}]})),
        text_reply("Renamed Check coverage to Verify coverage."),
    )
    outcome = await run(
        claude(fake_anthropic, max_retries=2), "rename check coverage to verify coverage"
    )
    assert outcome.doc.structure.jobs["check"].name == "Verify coverage"
    deltas = outcome.of("message.delta")
    assert len(deltas) > 1
    assert "".join(d["text"] for d in deltas) == "Renamed Check coverage to Verify coverage."
    first, second = fake_anthropic.requests
    assert first.model == "claude-opus-4-5" and first.stream
    assert first.system[0]["cache_control"] == {"type": "ephemeral"}
    assert not any("cache_control" in t for t in first.tools)  # the system's covers them
    assert {t["name"] for t in first.tools} >= {"add_jobs", "call_job_code_agent"}
    assert second.messages[-1]["content"][0]["type"] == "tool_result"
    # the rolling breakpoint caches the whole planner request; input is all cache tokens
    assert outcome.last["usage"]["output_tokens"] > 0


async def test_overloaded_then_success_is_retried_by_the_sdk(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        error_reply(529, "overloaded_error", retry_after=0.01),
        text_reply("It fetches referrals and checks coverage."),
    )
    outcome = await run(claude(fake_anthropic, max_retries=2), "what does it do?")
    assert len(fake_anthropic.requests) == 2
    assert outcome.of("message")[0]["text"] == "It fetches referrals and checks coverage."


async def test_persistent_rate_limit_is_a_typed_failure(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(error_reply(429, "rate_limit_error", retry_after=0.01))
    with pytest.raises(ModelUnavailableError):
        await run(claude(fake_anthropic), "hello")


async def test_timeout_fails_typed_and_leaves_the_document_committed(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(("update_workflow", {"name": "Intake"})),
        delay_reply(5.0, text_reply("too late")),
    )
    # The client timeout covers the first (instant) reply too, so it is generous enough to
    # hold on a loaded machine and still far below the second reply's delay.
    rt = runtime_for(claude(fake_anthropic, timeout=2.0))
    with pytest.raises(ModelTimeoutError):
        await run(rt.models["planner"], "rename the workflow", runtime=rt)
    committed = rt.committer.versions  # type: ignore[attr-defined]
    assert [v["version"] for v in committed] == [2]
    assert "name: Intake" in committed[-1]["yaml"]
    assert BASE_YAML.replace("Referral intake", "Intake") == committed[-1]["yaml"]


async def test_router_uses_the_small_model_with_a_forced_route_call(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(("route", {"destination": "planner", "confidence": 4})),
        text_reply("That step has no code yet."),
    )
    await run(
        claude(fake_anthropic, max_retries=2),
        "what does this code do?",
        page="job",
        job_key="check",
    )
    router_call = fake_anthropic.requests[0]
    assert router_call.model == "claude-haiku-4-5"
    assert router_call.tool_choice == {"type": "tool", "name": "route"}


async def test_timeout_on_the_first_call_fails_typed_with_the_document_unchanged(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(delay_reply(2.0, tool_reply(("update_workflow", {"name": "Intake"}))))
    rt = runtime_for(claude(fake_anthropic, timeout=0.3))
    runner = TurnRunner(build_graph(InMemorySaver()))
    events: list[dict[str, object]] = []
    with pytest.raises(ModelTimeoutError):
        async for event in runner.start(turn("rename the workflow"), rt):
            events.append(event.wire())
    assert rt.committer.versions == []  # type: ignore[attr-defined]
    assert [e for e in events if e["type"] == "workflow"] == []
    state = await runner.state("turn-1")
    assert state["yaml"] == BASE_YAML
    assert state["version"] == 1
    assert len(fake_anthropic.requests) == 1


def _chain_yaml(jobs: int) -> str:
    lines = ["name: Chain", "jobs:"]
    for i in range(jobs):
        lines += [
            f"  step-{i}:",
            f"    name: Step {i}",
            "    adaptor: '@openfn/language-http@latest'",
        ]
    lines.append("edges:")
    for i in range(jobs - 1):
        lines += [
            f"  step-{i}->step-{i + 1}:",
            f"    source_job: step-{i}",
            f"    target_job: step-{i + 1}",
            "    condition_type: on_job_success",
        ]
    return "\n".join(lines) + "\n"


async def test_later_rounds_read_the_earlier_ones_from_the_cache(
    fake_anthropic: FakeAnthropicServer,
) -> None:
    fake_anthropic.queue(
        tool_reply(("update_jobs", {"jobs": [{"key": "step-3", "name": "Renamed"}]})),
        tool_reply(("update_jobs", {"jobs": [{"key": "step-7", "name": "Renamed too"}]})),
        text_reply("Renamed two steps."),
    )
    model = claude(fake_anthropic, max_retries=2)
    usages: list[dict[str, int]] = []
    original = model.create

    async def create(request, *, on_text=None):  # type: ignore[no-untyped-def]
        response = await original(request, on_text=on_text)
        usages.append(response.usage.as_dict())
        return response

    model.create = create  # type: ignore[method-assign]
    await run(model, "rename step 3 and step 7", yaml=_chain_yaml(150))
    assert len(usages) == 3
    first, second, third = usages
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 4096
    for previous, later in ((first, second), (second, third)):
        written = previous["cache_read_input_tokens"] + previous["cache_creation_input_tokens"]
        assert later["cache_read_input_tokens"] == written  # everything the round before sent
        assert later["input_tokens"] == 0  # the rolling breakpoint covers the new blocks too
    assert all(len(r.messages) <= 5 for r in fake_anthropic.requests)
    assert fake_anthropic.rejected == []
