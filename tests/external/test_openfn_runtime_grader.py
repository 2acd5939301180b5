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
    assert result.comment.startswith("ran shape in @openfn/runtime (language-common@3.3.4")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("sendMail('ops@example.org');", "calls unknown sendMail"),
        ("fn(state => state.data.missing.field);", "shape failed: RuntimeError: TypeError"),
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
