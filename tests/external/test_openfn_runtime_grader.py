"""The eval grader ``runs_in_openfn`` with node: it passes a workflow that runs
clean in @openfn/runtime and fails one whose code breaks there."""

from __future__ import annotations

import pytest

from evals.graders import runs_in_openfn
from tests.evals.helpers import outcome, scenario
from tests.evals.test_runtime_grader import COMMON_ONLY

pytestmark = pytest.mark.external

BEFORE = COMMON_ONLY.replace("name: Tiny", "name: Before")


def test_a_workflow_that_runs_clean_passes() -> None:
    result = runs_in_openfn(scenario(), outcome(BEFORE, COMMON_ONLY))
    assert result is not None and result.passed and not result.skipped, result
    assert result.comment == "1 run(s) in @openfn/runtime (language-common@3.3.4): shape"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("sendMail('ops@example.org');", "calls unknown sendMail"),
        ("fn(state => state.data.missing.field);", "run 1: shape failed: RuntimeError: TypeError"),
        ("fn(state => {", "does not parse"),
    ],
    ids=["unknown-function", "runtime-error", "syntax-error"],
)
def test_code_that_breaks_in_openfn_fails(body: str, problem: str) -> None:
    broken = COMMON_ONLY.replace("body: fn(state => state);", f"body: {body!r}")
    result = runs_in_openfn(scenario(), outcome(BEFORE, broken))
    assert result is not None and not result.passed and not result.skipped, result
    assert problem in result.comment


def test_code_outside_the_compiler_subset_is_not_run() -> None:
    subset = COMMON_ONLY.replace("body: fn(state => state);", "body: 'const x = 1;'")
    result = runs_in_openfn(scenario(), outcome(BEFORE, subset))
    assert result is not None and result.skipped and result.comment.startswith("not run:")


BRANCH = """\
name: Branch
jobs:
  check:
    name: Check
    adaptor: '@openfn/language-common@latest'
    body: fn(state => state);
  yes:
    name: Yes
    adaptor: '@openfn/language-common@latest'
    body: fn(state => state);
  no:
    name: No
    adaptor: '@openfn/language-http@latest'
    body: post('no', $.data);
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->check:
    source_trigger: webhook
    target_job: check
    condition_type: always
    enabled: true
  check->yes:
    source_job: check
    target_job: yes
    condition_type: js_expression
    condition_expression: "!state.errors?.[upstreamStepId] && state.data.ok === true"
    enabled: true
  check->no:
    source_job: check
    target_job: no
    condition_type: js_expression
    condition_expression: "!state.errors?.[upstreamStepId] && state.data.ok !== true"
    enabled: true
"""
RUNS = {
    "runs": [
        {"data": {"ok": True}, "path": ["check", "yes"]},
        {"data": {"ok": False}, "path": ["check", "No"]},
        {"fail": "check", "path": ["check"]},
    ]
}


def test_declared_runs_check_each_path() -> None:
    result = runs_in_openfn(scenario(RUNS), outcome(BEFORE, BRANCH))
    assert result is not None and result.passed, result
    assert result.comment.endswith(": check -> yes; check -> no; check")


def test_a_declared_run_that_takes_another_path_fails() -> None:
    unguarded = BRANCH.replace("!state.errors?.[upstreamStepId] && state.data.ok !== true", "true")
    result = runs_in_openfn(scenario(RUNS), outcome(BEFORE, unguarded))
    assert result is not None and not result.passed and not result.skipped
    assert result.score == round(1 / 3, 3)
    assert "run 1: took check -> yes -> no, expected check -> yes" in result.comment
    assert "run 3 (fail check): took check -> no, expected check" in result.comment
