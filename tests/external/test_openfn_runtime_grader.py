"""The eval grader ``runs_in_openfn`` with node, through the one runner
(``agents.testrun``): it passes a workflow that runs clean in @openfn/runtime, fails
one whose code breaks there, and holds each declared run to its path, its samples
and its unanswered calls."""

from __future__ import annotations

from typing import Any

import pytest

from evals.graders import runs_in_openfn
from tests.evals.helpers import COMMON_ONLY, outcome, scenario

pytestmark = pytest.mark.external

BEFORE = COMMON_ONLY.replace("name: Tiny", "name: Before")


def test_a_workflow_that_runs_clean_passes() -> None:
    result = runs_in_openfn(scenario(), outcome(BEFORE, COMMON_ONLY))
    assert result is not None and result.passed and not result.skipped, result
    assert result.comment == "1 run(s) in @openfn/runtime (language-common@3.3.4): shape"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("sendMail('ops@example.org');", "run 1: shape calls unknown sendMail"),
        ("fn(state => state.data.missing.field);", "run 1: shape failed: RuntimeError: TypeError"),
        ("fn(state => {", "does not parse"),  # broken code fails: it is not "not run"
    ],
    ids=["unknown-function", "runtime-error", "syntax-error"],
)
def test_code_that_breaks_in_openfn_fails(body: str, problem: str) -> None:
    broken = COMMON_ONLY.replace("body: fn(state => state);", f"body: {body!r}")
    result = runs_in_openfn(scenario(), outcome(BEFORE, broken))
    assert result is not None and not result.passed and not result.skipped, result
    assert problem in result.comment


def test_code_outside_the_compiler_subset_is_not_run() -> None:
    subset = COMMON_ONLY.replace("body: fn(state => state);", "body: \"import { x } from 'y';\"")
    result = runs_in_openfn(scenario(), outcome(BEFORE, subset))
    assert result is not None and result.skipped and not result.passed
    assert result.comment.startswith("not run: shape: ")


# The referral's status comes from an HTTP call the sample answers: the branch taken
# is the sample's doing (the input data says nothing about it).
BRANCH = """\
name: Branch
jobs:
  fetch:
    name: Fetch referral
    adaptor: '@openfn/language-http@latest'
    body: get('referrals/7');
  yes:
    name: Yes
    adaptor: '@openfn/language-common@latest'
    body: fn(state => state);
  no:
    name: No
    adaptor: '@openfn/language-http@latest'
    body: post('alerts', $.data);
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->fetch:
    source_trigger: webhook
    target_job: fetch
    condition_type: always
    enabled: true
  fetch->yes:
    source_job: fetch
    target_job: yes
    condition_type: js_expression
    condition_expression: "!state.errors?.[upstreamStepId] && state.data.ok === true"
    enabled: true
  fetch->no:
    source_job: fetch
    target_job: no
    condition_type: js_expression
    condition_expression: "!state.errors?.[upstreamStepId] && state.data.ok !== true"
    enabled: true
"""
REFERRAL_URL = "https://sample.test/referrals/7"
ALERTS_URL = "https://sample.test/alerts"


def _get(body: Any) -> dict[str, Any]:
    return {"method": "GET", "url": REFERRAL_URL, "body": body}


RUNS: list[dict[str, Any]] = [
    {"responses": [_get({"ok": True})], "path": ["fetch", "yes"]},
    {
        "responses": [_get({"ok": False}), {"method": "POST", "url": "https://sample.test/*"}],
        "path": ["fetch", "No"],
    },
    {"responses": [_get({"ok": True})], "fail": "~fetch", "path": ["fetch"]},
]


def test_declared_runs_check_each_path() -> None:
    result = runs_in_openfn(scenario({"runs": RUNS}), outcome(BEFORE, BRANCH))
    assert result is not None and result.passed, result
    assert result.comment == (
        "3 run(s) in @openfn/runtime (language-common@3.3.4, language-http@7.2.10): "
        "fetch -> yes; fetch -> no; fetch"
    )


def test_a_declared_run_that_takes_another_path_fails() -> None:
    unguarded = BRANCH.replace("!state.errors?.[upstreamStepId] && state.data.ok !== true", "true")
    runs = [RUNS[0], RUNS[2]]
    result = runs_in_openfn(scenario({"runs": runs}), outcome(BEFORE, unguarded))
    assert result is not None and not result.passed and not result.skipped
    assert result.score == 0.0
    assert "run 1: took fetch -> yes -> no, expected fetch -> yes" in result.comment
    assert "run 2 (fail ~fetch): took fetch -> no, expected fetch" in result.comment
    # The unguarded arm posts: no sample answers it in these runs.
    assert f"run 1: no: no sample answered POST {ALERTS_URL}" in result.comment


def test_a_call_no_sample_answers_fails_unless_the_run_expects_it() -> None:
    unanswered = {"responses": [_get({"ok": False})], "path": ["fetch", "no"]}
    result = runs_in_openfn(scenario({"runs": [unanswered]}), outcome(BEFORE, BRANCH))
    assert result is not None and not result.passed and not result.skipped
    assert f"run 1: no: no sample answered POST {ALERTS_URL}" in result.comment
    assert "run 1: no failed: " in result.comment and "ECONNREFUSED" in result.comment

    expected = {**unanswered, "unmatched": [f"POST {ALERTS_URL}"]}
    result = runs_in_openfn(scenario({"runs": [expected]}), outcome(BEFORE, BRANCH))
    assert result is not None and result.passed, result


def test_a_sample_with_an_error_status_fails_the_step() -> None:
    refused = {"responses": [{**_get({"error": "gone"}), "status": 404}], "path": ["fetch"]}
    result = runs_in_openfn(scenario({"runs": [refused]}), outcome(BEFORE, BRANCH))
    assert result is not None and not result.passed and not result.skipped
    assert "run 1: fetch failed: " in result.comment and "404" in result.comment
