"""The plan-mode graders on real plan runs (scripted, through agents.plan): they pass a
right plan and fail a wrong one, naming what is wrong."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from agents.testrun import install
from evals.execute import RunOutcome
from evals.graders import grade_deterministic
from evals.graders.base import GradeResult
from evals.graders.plan_build import (
    plan_builds,
    plan_project_exports,
    plan_runs_in_openfn,
    workflow_problems,
)
from evals.plan_execute import PlanRunOutcome, PlanTurnOutcome
from evals.plan_scenario import SPECS_DIR
from evals.report import results_dict
from evals.runner import EvalOptions, run_eval
from evals.scenario import Scenario, load_scenarios
from tests.evals.helpers import REFERRAL
from tools.plan import PlannedOutcome, PlanRecord

BY_ID = {s.id: s for s in load_scenarios()}


async def _run(scenario: Scenario) -> RunOutcome:
    options = EvalOptions(model="scripted", judge=False, runtime=False)
    run = await run_eval(options, scenarios=[scenario])
    return run.results[0].runs[0].outcome


def _grades(scenario: Scenario, outcome: RunOutcome) -> dict[str, GradeResult]:
    return {g.name: g for g in grade_deterministic(scenario, outcome)}


def _with(scenario: Scenario, **changes: Any) -> Scenario:
    """``scenario`` with its proposals or its first turn's expect/reviews replaced."""
    data = scenario.model_dump(exclude_none=True, exclude_defaults=False)
    data = copy.deepcopy(data)
    if "proposals" in changes:
        data["plan"]["proposals"] = changes.pop("proposals")
    turn = data["plan"]["turns"][0]
    for key in ("reviews", "expect"):
        if key in changes:
            turn[key] = changes.pop(key)
    assert not changes
    return Scenario.model_validate(data)


async def test_a_right_plan_passes_every_plan_grader() -> None:
    scenario = BY_ID["plan-scripted-two-built"]
    outcome = await _run(scenario)
    grades = _grades(scenario, outcome)
    assert set(grades) >= {
        "completed",
        "plan_review",
        "plan_decomposition",
        "plan_order",
        "plan_contracts",
        "plan_builds",
        "plan_workflows_valid",
    }
    assert all(g.passed for g in grades.values()), [g for g in grades.values() if not g.passed]
    assert outcome.plan is not None and outcome.after_yaml.count("# workflow ") == 2


async def test_a_wrong_plan_fails_decomposition_order_contracts_and_builds() -> None:
    right = BY_ID["plan-scripted-two-built"]
    wrong_plan = {
        "summary": "Coverage first, no hand-off, and a workflow nobody asked for.",
        "workflows": [
            {
                "key": "coverage-check",
                "name": "Coverage",
                "purpose": "Check coverage.",
                "trigger": {"type": "webhook"},
                "steps": ["Check the coverage"],
            },
            {
                "key": "intake",
                "name": "Intake",
                "purpose": "Take in referrals.",
                "trigger": {"type": "webhook"},
                "steps": ["Fetch the referral over http"],
            },
            {
                "key": "extra",
                "name": "Extra",
                "purpose": "Not in the spec.",
                "trigger": {"type": "webhook"},
                "steps": ["Log it"],
            },
        ],
        "order": ["coverage-check", "intake", "extra"],
    }
    # The same expectations, the wrong proposal; declined, so nothing is built.
    scenario = _with(right, proposals=[{"plan": wrong_plan}], reviews=[{}])
    outcome = await _run(scenario)
    grades = _grades(scenario, outcome)
    failed = {name for name, g in grades.items() if not g.passed}
    assert failed == {
        "plan_decomposition",
        "plan_order",
        "plan_contracts",
        "plan_builds",
        "plan_review",  # its reply is "rejected", not "Built 2 of 2 workflows"
    }
    decomposition = grades["plan_decomposition"].comment
    assert "unexpected workflow(s) extra" in decomposition
    assert "coverage-check is named 'Coverage'" in decomposition
    assert "coverage-check depends on [], expected ['intake']" in decomposition
    assert "expected intake -> coverage-check" in grades["plan_order"].comment
    assert "no hand-off intake -> coverage-check" in grades["plan_contracts"].comment
    assert "built nothing, expected ['intake', 'coverage-check']" in grades["plan_builds"].comment
    assert "plan status rejected, expected built" in grades["plan_builds"].comment


async def test_feedback_must_give_exactly_the_expected_revision() -> None:
    scenario = BY_ID["plan-scripted-feedback-revised-then-rejected"]
    outcome = await _run(scenario)
    assert _grades(scenario, outcome)["plan_review"].passed
    expect = scenario.plan.turns[0].expect.model_dump() if scenario.plan else {}
    expect["revised"] = {"added": [], "removed": ["intake"], "changed": {}}
    wrong = _with(scenario, expect=expect)
    comment = _grades(wrong, outcome)["plan_review"].comment
    assert "the revision adds ['daily-report'], expected []" in comment
    assert "the revision removes [], expected ['intake']" in comment


async def test_the_delta_must_be_exactly_the_expected_one() -> None:
    scenario = BY_ID["plan-scripted-delta-rebuilds-only-changed"]
    outcome = await _run(scenario)
    assert _grades(scenario, outcome)["plan_delta"].passed
    assert scenario.plan is not None
    data = scenario.model_dump(exclude_none=True)
    data["plan"]["turns"][1]["expect"]["delta"] = {"changed": {"coverage-check": ["name"]}}
    data["plan"]["turns"][1]["expect"]["built"] = ["intake", "coverage-check"]
    wrong = Scenario.model_validate(data)
    grades = _grades(wrong, outcome)
    assert "changes coverage-check's ['steps'], expected ['name']" in grades["plan_delta"].comment
    assert "turn 2: built ['coverage-check']" in grades["plan_builds"].comment


async def test_building_more_than_scripted_fails_the_scenario() -> None:
    # Approved, but the scenario scripts no build: the first build exhausts the script.
    scenario = _with(BY_ID["plan-scripted-reject"], reviews=[{"approve": True}])
    outcome = await _run(scenario)
    grades = _grades(scenario, outcome)
    assert not grades["completed"].passed and "Script" in grades["completed"].comment


def _turn(answered: list[str], status: str, created: list[str]) -> PlanTurnOutcome:
    plan = BY_ID["plan-scripted-two-built"].plan
    assert plan is not None and plan.proposals is not None
    record = PlanRecord.model_validate({"status": status, "plan": plan.proposals[0].plan})
    return PlanTurnOutcome(content="spec", answered=answered, record=record, created=created)


def _outcome(turn: PlanTurnOutcome) -> RunOutcome:
    return RunOutcome("t", "scripted", "", "", [], 0, plan=PlanRunOutcome("referrals", [turn]))


def test_a_rejected_plan_that_built_something_fails() -> None:
    scenario = BY_ID["plan-scripted-reject"]
    clean = plan_builds(scenario, _outcome(_turn(["reject"], "rejected", [])))
    assert clean is not None and clean.passed
    leaked = plan_builds(scenario, _outcome(_turn(["reject"], "building", ["w1"])))
    assert leaked is not None and not leaked.passed
    assert "a rejected plan built something (1 workflow(s) created" in leaked.comment
    assert "a rejected plan's status is building" in leaked.comment


def test_workflow_problems_need_steps_code_and_no_blocking_problem() -> None:
    assert workflow_problems("name: Empty\n") == ["has no steps"]
    problems = workflow_problems(REFERRAL)
    assert any("has no code" in p for p in problems)


def test_plan_runs_are_not_run_without_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install.shutil, "which", lambda _name: None)
    scenario = BY_ID["plan-scripted-two-built"]
    yaml = "name: One\njobs:\n  a:\n    name: A\n    adaptor: '@openfn/language-common@latest'\n"
    yaml += "    body: fn(state => state);\n"
    turn = _turn(["approve"], "built", ["w1"])
    assert turn.record is not None
    turn.record.workflows = {"intake": PlannedOutcome(workflow_id="w1", status="built")}
    turn.yamls = {"intake": yaml}
    result = plan_runs_in_openfn(scenario, _outcome(turn))
    assert result is not None and result.skipped and not result.passed
    assert "not run" in result.comment


def test_a_project_that_does_not_export_as_one_project_yaml_fails() -> None:
    scenario = BY_ID["plan-scripted-two-built"]
    one = "name: Intake\njobs:\n  a:\n    name: A\n    adaptor: '@openfn/language-common@latest'\n"
    one += "    body: fn(state => state);\n"
    turn = _turn(["approve"], "built", ["w1", "w2"])
    turn.yamls = {"intake": one}
    result = plan_project_exports(scenario, _outcome(turn))
    assert result is not None and result.passed, result
    # Two workflows of one name get the same project.yaml key: the export refuses it.
    turn.yamls = {"intake": one, "coverage-check": one}
    result = plan_project_exports(scenario, _outcome(turn))
    assert result is not None and not result.passed
    assert result.comment.startswith("project.yaml:")


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("referral_system", "four_processes"), ("lab_results", "numbered_sections")],
)
def test_eval_specs_are_the_spec_planners_test_specs(ours: str, theirs: str) -> None:
    # The README's example and the offline planner's tests read these; a change there
    # should be a deliberate change here too.
    specs = Path(__file__).resolve().parents[1] / "agents" / "offline" / "specs"
    assert (SPECS_DIR / f"{ours}.md").read_text() == (specs / f"{theirs}.md").read_text()


async def test_the_report_lists_each_plan_turn() -> None:
    scenario = BY_ID["plan-scripted-delta-rebuilds-only-changed"]
    run = await run_eval(
        EvalOptions(model="scripted", judge=False, runtime=False), scenarios=[scenario]
    )
    (entry,) = results_dict(run)["scenarios"]
    first, second = entry["plan"]
    assert first["built"] == ["intake", "coverage-check"] and first["delta"] is None
    assert second["built"] == ["coverage-check"] and second["answered"] == ["approve"]
    assert [c["key"] for c in second["delta"]["changed"]] == ["coverage-check"]
    assert entry["final_yaml"].startswith("# workflow intake\n")


async def test_plan_runs_fail_when_a_hand_off_does_not_reach_its_target() -> None:
    scenario = BY_ID["plan-scripted-two-built"]
    outcome = await _run(scenario)
    result = plan_runs_in_openfn(scenario, outcome)
    assert result is not None
    if result.skipped:
        pytest.skip(result.comment)  # node or the pinned runtime is not installed here
    assert result.passed, result.comment
    assert outcome.plan is not None
    final = outcome.plan.turns[-1]
    path = "referrals-coverage-check"
    # The receiver's webhook served elsewhere: the source's POST no longer reaches it.
    final.yamls["coverage-check"] = final.yamls["coverage-check"].replace(path, "elsewhere")
    # And the source's hand-off step posting somewhere else: it never posts to the target.
    final.yamls["intake"] = final.yamls["intake"].replace(f"/i/{path}", "/i/nowhere")
    broken = plan_runs_in_openfn(scenario, outcome)
    assert broken is not None and not broken.passed and not broken.skipped
    assert f"intake never posted to /i/{path}" in broken.comment
    assert f"coverage-check's webhook is not served at /i/{path}" in broken.comment
    assert f"intake has no hand-off step to /i/{path}" in broken.comment
