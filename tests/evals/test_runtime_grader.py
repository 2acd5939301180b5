"""``runs_in_openfn`` without node: when it applies, and that it never passes
what it could not run (node is exercised in tests/external/test_openfn_runtime_grader.py)."""

from __future__ import annotations

import pytest

from agents.testrun import install
from evals.graders import runs_in_openfn
from tests.evals.helpers import REFERRAL, outcome, scenario

COMMON_ONLY = """\
name: Tiny
jobs:
  shape:
    name: Shape
    adaptor: '@openfn/language-common@latest'
    body: fn(state => state);
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->shape:
    source_trigger: webhook
    target_job: shape
    condition_type: always
    enabled: true
"""


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
    changed = COMMON_ONLY.replace("name: Tiny", "name: Tiny 2")
    result = runs_in_openfn(scenario(), outcome(COMMON_ONLY, changed))
    assert result is not None and result.skipped and not result.passed
    assert "not run: `node` is not on PATH" in result.comment
