"""``runs_in_openfn`` without node: when it applies, that it never passes what it could
not run, and how it reads a finished test run (paths, unanswered calls, forced
failures) from the runner's report (node is exercised in
tests/external/test_openfn_runtime_grader.py)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agents.testrun import RunDetail, install
from evals.graders import runs_in_openfn
from evals.graders import runtime as grader
from evals.scenario import SAMPLE_CONFIGURATION, RunExpect
from tests.evals.helpers import COMMON_ONLY, REFERRAL, outcome, scenario
from tools.testrun import (
    RequestRecord,
    RunRequest,
    StepRun,
    StepStatus,
    TestRun,
    UnsupportedStep,
)

CHANGED = COMMON_ONLY.replace("name: Tiny", "name: Tiny 2")


def test_a_run_that_changed_nothing_is_not_judged() -> None:
    assert runs_in_openfn(scenario(), outcome(COMMON_ONLY)) is None


def test_a_failed_run_is_not_judged() -> None:
    assert runs_in_openfn(scenario(), outcome(REFERRAL, COMMON_ONLY, error="boom")) is None


def test_adaptors_not_installed_here_are_not_run_never_passed() -> None:
    changed = REFERRAL.replace("name: Referral intake", "name: Referral intake 2", 1)
    result = runs_in_openfn(scenario(), outcome(REFERRAL, changed))
    assert result is not None and result.skipped and not result.passed
    assert result.comment.startswith("not run:")
    assert "@openfn/language-gmail" in result.comment


def test_without_node_it_is_not_run_never_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install.shutil, "which", lambda _name: None)
    result = runs_in_openfn(scenario(), outcome(COMMON_ONLY, CHANGED))
    assert result is not None and result.skipped and not result.passed
    assert result.comment.startswith("not run: ")
    assert "`node` is not on PATH" in result.comment


# --- reading the runner's report (its runs faked: what node would have said) ---------


def _step(key: str, status: StepStatus = "succeeded", error: str | None = None) -> StepRun:
    return StepRun(key=key, name=key, status=status, duration_ms=1, error=error)


def _run(*steps: StepRun, **fields: Any) -> TestRun:
    fields.setdefault(
        "status", "failed" if any(s.status == "failed" for s in steps) else "succeeded"
    )
    return TestRun(
        run_id="r", steps=list(steps), runtime={"@openfn/language-common": "3.3.4"}, **fields
    )


class FakeRunner:
    """Stands in for ``agents.testrun.run_sync_detail``: hands out the given runs in
    order and keeps what the grader asked for."""

    def __init__(self, *details: RunDetail) -> None:
        self.details = list(details)
        self.calls: list[dict[str, Any]] = []

    def __call__(self, workflow: Any, request: RunRequest, **options: Any) -> RunDetail:
        self.calls.append({"request": request, **options})
        return self.details.pop(0)


def _grade(
    monkeypatch: pytest.MonkeyPatch, runs: list[Any], *details: RunDetail
) -> tuple[Any, FakeRunner]:
    fake = FakeRunner(*details)
    monkeypatch.setattr(grader, "run_sync_detail", fake)
    result = runs_in_openfn(scenario({"runs": runs}), outcome(COMMON_ONLY, CHANGED))
    assert result is not None
    return result, fake


def test_each_sample_is_sent_to_the_runner_as_a_run_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sample = {"method": "GET", "url": "https://sample.test/status", "body": {"ok": True}}
    runs = [
        {"data": {"ok": True}, "responses": [sample], "path": ["shape"]},
        {"data": {"n": 1}, "fail": "Shape", "path": ["shape"]},
    ]
    forced = _step("shape", "failed", f"Error: {grader.FORCED_FAILURE}")
    result, fake = _grade(
        monkeypatch, runs, RunDetail(_run(_step("shape"))), RunDetail(_run(forced))
    )
    assert result.passed, result
    first, second = (call["request"] for call in fake.calls)
    assert first.input == {"data": {"ok": True}}
    assert [r.model_dump() for r in first.responses] == [{**sample, "status": 200, "headers": {}}]
    assert first.configuration == SAMPLE_CONFIGURATION
    assert fake.calls[0]["inject_failures"] is None
    assert second.input == {"data": {"n": 1}} and second.responses == []
    assert fake.calls[1]["inject_failures"] == {"shape": grader.FORCED_FAILURE}
    assert result.comment == "2 run(s) in @openfn/runtime (language-common@3.3.4): shape; shape"


def test_an_unsupported_run_is_not_run_never_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    unsupported = _run(
        status="unsupported",
        unsupported=[UnsupportedStep(key="shape", reason="`const` at the top level")],
    )
    event = {"ev": "unsupported", "steps": [{"id": "shape", "kind": "subset"}]}
    result, _ = _grade(monkeypatch, [{"path": ["shape"]}], RunDetail(unsupported, [event]))
    assert result.skipped and not result.passed
    assert result.comment == "not run: shape: `const` at the top level"


def test_code_that_does_not_parse_fails_it_is_not_a_limit_of_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = _run(
        status="unsupported", unsupported=[UnsupportedStep(key="shape", reason="does not parse")]
    )
    event = {"ev": "unsupported", "steps": [{"id": "shape", "kind": "syntax"}]}
    result, _ = _grade(monkeypatch, [{"path": ["shape"]}], RunDetail(broken, [event]))
    assert not result.passed and not result.skipped
    assert result.comment == "shape: does not parse"


def test_an_unanswered_call_is_a_problem_unless_the_run_expects_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "https://sample.test/referrals/7"
    call = RequestRecord(step_key="shape", method="GET", url=url, status=None, matched=False)
    failed = _step("shape", "failed", "ECONNREFUSED")

    def detail() -> RunDetail:
        return RunDetail(_run(failed, requests=[call]))

    result, _ = _grade(monkeypatch, [{"path": ["shape"]}], detail())
    assert not result.passed and not result.skipped
    assert f"run 1: shape: no sample answered GET {url}" in result.comment
    assert "run 1: shape failed: ECONNREFUSED" in result.comment

    for listed in (f"GET {url}", "get https://sample.test/referrals/*"):
        result, _ = _grade(monkeypatch, [{"unmatched": [listed], "path": ["shape"]}], detail())
        assert result.passed, (listed, result)

    wrong_method = [{"unmatched": [f"POST {url}"], "path": ["shape"]}]
    result, _ = _grade(monkeypatch, wrong_method, detail())
    assert not result.passed and f"no sample answered GET {url}" in result.comment
    assert f"expected POST {url} to go unanswered, but no such call was left so" in result.comment


def test_an_expected_unanswered_call_that_is_answered_is_a_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "https://sample.test/referrals/7"
    answered = RequestRecord(step_key="shape", method="GET", url=url, status=200, matched=True)
    runs = [{"unmatched": [f"GET {url}"], "path": ["shape"]}]
    result, _ = _grade(monkeypatch, runs, RunDetail(_run(_step("shape"), requests=[answered])))
    assert not result.passed
    assert result.comment == (
        f"run 1: expected GET {url} to go unanswered, but no such call was left so"
    )


def test_a_refused_connection_is_a_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = RequestRecord(
        step_key="shape", method="CONNECT", url="tcp://203.0.113.9:443", matched=False
    )
    result, _ = _grade(
        monkeypatch, [{"path": ["shape"]}], RunDetail(_run(_step("shape"), requests=[refused]))
    )
    assert not result.passed
    assert "no sample answered CONNECT tcp://203.0.113.9:443" in result.comment


def test_another_path_a_stray_failure_and_a_forced_failure_that_did_not_happen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = [
        {"path": ["shape"]},
        {"fail": "shape", "path": ["shape"]},
        {"fail": "shape", "path": ["shape"]},
    ]
    result, _ = _grade(
        monkeypatch,
        runs,
        RunDetail(_run(_step("shape"), _step("shape"))),
        RunDetail(_run(_step("shape"))),
        RunDetail(_run(_step("shape", "failed", "TypeError: x is undefined"))),
    )
    assert not result.passed and result.score == 0.0
    assert "run 1: took shape -> shape, expected shape" in result.comment
    assert "run 2 (fail shape): shape was forced to fail but did not" in result.comment
    assert (
        "run 3 (fail shape): shape failed before its forced failure: TypeError: x is undefined"
        in result.comment
    )


def test_a_time_out_and_an_unknown_function_are_problems(monkeypatch: pytest.MonkeyPatch) -> None:
    timed_out = _run(_step("shape", "failed", "stopped"), status="timed_out", error="took 30 s")
    plan = {"ev": "plan", "compile": {"shape": {"unknown": ["sendMail"]}}}
    runs = [{"path": ["shape"]}, {"path": ["shape"]}]
    result, _ = _grade(
        monkeypatch,
        runs,
        RunDetail(timed_out),
        RunDetail(_run(_step("shape", "failed", "ReferenceError")), [plan]),
    )
    assert not result.passed
    assert "run 1: timed out: took 30 s" in result.comment
    assert "run 2: shape calls unknown sendMail" in result.comment


def test_without_declared_runs_one_smoke_run_answers_every_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, fake = _grade(monkeypatch, [], RunDetail(_run(_step("shape"))))
    assert result.passed, result
    (call,) = fake.calls
    methods = {(r.method, r.url, r.status, str(r.body)) for r in call["request"].responses}
    assert methods == {(m, "*", 200, "{}") for m in ("GET", "POST", "PUT", "PATCH", "DELETE")}
    result, _ = _grade(monkeypatch, [], RunDetail(_run()))
    assert not result.passed and result.comment == "run 1: no step ran"


def test_unmatched_entries_must_name_a_method_and_a_url() -> None:
    with pytest.raises(ValidationError, match="expected 'METHOD URL'"):
        RunExpect(path=[], unmatched=["https://sample.test/x"])
    with pytest.raises(ValidationError):
        RunExpect.model_validate({"path": [], "responses": [{"method": "GET"}]})  # no url
