"""The LLM judge: skipped without a key, real SDK calls against the fake Messages API with one."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from agents.models.factory import ModelConfig
from agents.models.providers import CloudSettings
from evals.graders import grade, run_passed
from evals.graders.judge import Judge, JudgeConfig, load_rubric, render_case
from evals.scenario import SCENARIOS_DIR, load_scenarios
from tests.evals.helpers import REFERRAL, edited, outcome, scenario
from tests.fakes.anthropic_server import FakeAnthropicServer, error_reply, text_reply, tool_reply
from tests.fakes.platforms import VERTEX_VERSION, FakeCloudServer

RENAME = ("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]})


def _judge(server: FakeAnthropicServer) -> Judge:
    models = ModelConfig(api_key=SecretStr("test-key"), base_url=server.base_url)
    return Judge(JudgeConfig(models, model="claude-haiku-4-5"))


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


@pytest.mark.parametrize("provider", ["bedrock", "vertex"])
async def test_the_judge_runs_on_the_configured_provider(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``PLANWRIGHT_PROVIDER`` reaches the judge: built by the model factory from the same
    configuration as the models under test, its own model mapped to the provider's id."""
    for name in ("ANTHROPIC_API_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    with FakeCloudServer() as cloud:
        monkeypatch.setenv("PLANWRIGHT_PROVIDER", provider)
        monkeypatch.setenv("PLANWRIGHT_JUDGE_MODEL", "claude-haiku-4-5")
        if provider == "bedrock":
            monkeypatch.setenv("AWS_ACCESS_KEY_ID", cloud.aws_access_key)
            monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", cloud.aws_secret_key)
            monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
            monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
            monkeypatch.setenv("PLANWRIGHT_CLOUD_REGION", cloud.aws_region)
            monkeypatch.setenv("PLANWRIGHT_CLOUD_BASE_URL", cloud.base_url)
        else:
            monkeypatch.setenv("PLANWRIGHT_CLOUD_REGION", cloud.vertex_region)
            monkeypatch.setenv("PLANWRIGHT_VERTEX_PROJECT_ID", cloud.vertex_project)
            monkeypatch.setenv("PLANWRIGHT_VERTEX_ACCESS_TOKEN", cloud.vertex_token)
            monkeypatch.setenv("PLANWRIGHT_CLOUD_BASE_URL", cloud.vertex_base_url)
        config = JudgeConfig.from_env()
        assert config.models.provider == provider and config.available  # no Anthropic key
        cloud.queue(tool_reply(("grade", {"score": 5, "passed": True, "comment": "Exact."})))
        judge = Judge(config)
        result = await judge.grade(scenario({"rubric": "general"}), outcome(REFERRAL))
        assert result is not None and result.passed and not result.skipped
        assert cloud.rejected == [] and cloud.errors == []
        (request,) = cloud.requests
        if provider == "bedrock":
            assert request.path == (
                "/model/anthropic.claude-haiku-4-5-20251001-v1:0/invoke-with-response-stream"
            )
            assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 ")
        else:
            assert request.path.endswith(
                "/publishers/anthropic/models/claude-haiku-4-5@20251001:streamRawPredict"
            )
            assert request.headers["authorization"] == f"Bearer {cloud.vertex_token}"
            assert request.json["anthropic_version"] == VERTEX_VERSION
        assert request.json["tool_choice"] == {"type": "tool", "name": "grade"}


def test_a_judge_model_the_api_does_not_serve_stops_the_judge_being_built() -> None:
    from agents.models.catalog import UnknownModelError

    models = ModelConfig(
        provider="vertex",
        cloud=CloudSettings(region="us-east5", project_id="p", access_token=SecretStr("t")),
    )
    with pytest.raises(UnknownModelError, match="not a known model id"):
        Judge(JudgeConfig(models, model="claude-made-up-9"))
