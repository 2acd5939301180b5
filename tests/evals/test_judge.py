"""The LLM judge: skipped without a key, real SDK calls against the fake Messages API with one."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from evals.graders import grade, run_passed
from evals.graders.judge import Judge, JudgeConfig, load_rubric, render_case
from evals.scenario import SCENARIOS_DIR, load_scenarios
from tests.evals.helpers import REFERRAL, edited, outcome, scenario
from tests.fakes.anthropic_server import FakeAnthropicServer, error_reply, text_reply, tool_reply

RENAME = ("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]})


def _judge(server: FakeAnthropicServer) -> Judge:
    return Judge(JudgeConfig(SecretStr("test-key"), server.base_url, model="claude-haiku-4-5"))


async def test_judge_is_skipped_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    judge = Judge(JudgeConfig.from_env())
    assert not judge.available
    result = await judge.grade(scenario({"rubric": "general"}), outcome(REFERRAL))
    assert result is not None
    assert result.skipped and not result.passed
    assert result.as_dict()["status"] == "skipped"
    assert "no model key" in result.comment


async def test_a_skipped_judge_never_makes_a_failing_run_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    s = scenario({"mutation": "required", "rubric": "general"})
    results = await grade(s, outcome(REFERRAL), Judge(JudgeConfig.from_env()))
    assert [r.name for r in results if r.skipped] == ["judge:general"]
    assert not run_passed(results)  # the mutation grader failed; the skip does not help


async def test_judge_passes_with_a_good_verdict(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(tool_reply(("grade", {"score": 5, "passed": True, "comment": "Exact."})))
    s = scenario({"rubric": "general", "judge_notes": "Only the SMS step is renamed."})
    after = edited(REFERRAL, RENAME)
    result = await _judge(fake_anthropic).grade(s, outcome(REFERRAL, after, reply="Renamed."))
    assert result is not None and result.passed and not result.skipped
    assert result.name == "judge:general" and result.score == 1.0
    assert "5/5" in result.comment
    request = fake_anthropic.requests[0]
    assert request.model == "claude-haiku-4-5"
    assert request.tool_choice == {"type": "tool", "name": "grade"}
    assert "Rubric: general edit turn" in str(request.system)
    prompt = str(request.messages[0]["content"])
    assert "Only the SMS step is renamed." in prompt
    assert "jobs.send-sms.name" in prompt


async def test_judge_fails_with_a_bad_verdict(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(
        tool_reply(("grade", {"score": 2, "passed": False, "comment": "Wrong step."}))
    )
    result = await _judge(fake_anthropic).grade(scenario({"rubric": "safety"}), outcome(REFERRAL))
    assert result is not None and not result.passed and not result.skipped
    assert result.score == 0.25
    assert "Rubric: read-only sessions and prompt injection" in str(
        fake_anthropic.requests[0].system
    )


async def test_judge_errors_are_skipped_not_passed(fake_anthropic: FakeAnthropicServer) -> None:
    fake_anthropic.queue(text_reply("I refuse to call tools."))
    result = await _judge(fake_anthropic).grade(scenario({"rubric": "general"}), outcome(REFERRAL))
    assert result is not None and result.skipped and not result.passed
    fake_anthropic.queue(error_reply(400, "invalid_request_error", "bad"))
    result = await _judge(fake_anthropic).grade(scenario({"rubric": "general"}), outcome(REFERRAL))
    assert result is not None and result.skipped and "judge failed" in result.comment


async def test_no_rubric_means_no_judge(fake_anthropic: FakeAnthropicServer) -> None:
    assert await _judge(fake_anthropic).grade(scenario({"rubric": None}), outcome(REFERRAL)) is None
    assert fake_anthropic.requests == []


def test_every_rubric_named_by_a_scenario_exists() -> None:
    for s in load_scenarios(SCENARIOS_DIR):
        if s.expect.rubric is not None:
            assert "`grade`" in load_rubric(s.expect.rubric)


def test_render_case_shows_request_structure_and_diff() -> None:
    s = scenario({}, turns=[{"content": "rename send sms", "read_only": True}])
    text = render_case(s, outcome(REFERRAL, edited(REFERRAL, RENAME), reply="Renamed."))
    assert "read-only" in text and "Text patient" in text and "jobs.send-sms.name" in text


async def test_anthropic_run_with_the_judge_against_the_fake_server(
    fake_anthropic_env: FakeAnthropicServer,
) -> None:
    import io

    from evals.runner import EvalOptions, Progress, run_eval
    from evals.scenario import load_scenarios

    chosen = [s for s in load_scenarios(ids=["question-if-fails"])]
    fake_anthropic_env.queue(
        text_reply('If "Check coverage" fails, "Send SMS" runs.'),
        tool_reply(("grade", {"score": 5, "passed": True, "comment": "Correct and specific."})),
    )
    run = await run_eval(
        EvalOptions(model="anthropic", judge=True),
        scenarios=chosen,
        progress=Progress(1, stream=io.StringIO()),
    )
    grades = {g.name: g for g in run.results[0].runs[0].grades}
    assert run.pass_rate == 1.0, grades
    assert not grades["judge:question"].skipped and grades["judge:question"].passed
    assert run.model_ids["planner"]
    planner, judge = fake_anthropic_env.requests
    assert planner.tools and judge.tool_choice == {"type": "tool", "name": "grade"}
