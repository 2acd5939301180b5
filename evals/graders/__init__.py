"""Graders: deterministic ones first, then the optional LLM judge.

Each returns a :class:`GradeResult` ``{name, score 0-1, passed, comment}``
(or ``None`` when the scenario expects nothing of its kind). A run passes
when every grader that was not skipped passed. ``runs_in_openfn`` executes the
final workflow in OpenFn's own runtime (``not run``, i.e. skipped, where it
cannot here). Plan scenarios (``plan:``) get the plan graders instead
(``graders/plan.py``, ``graders/plan_build.py``) and no judge: the rubrics judge
one workflow's edit.
"""

from __future__ import annotations

import asyncio

from evals.execute import RunOutcome
from evals.graders.base import Grader, GradeResult
from evals.graders.behaviour import (
    asked_question,
    completed,
    confirmation,
    mutation_policy,
    reply_text,
    route,
)
from evals.graders.budget import within_budget
from evals.graders.consistency import reply_matches_diff
from evals.graders.integrity import document_valid, ids_preserved
from evals.graders.judge import Judge, JudgeConfig
from evals.graders.plan import (
    plan_contracts,
    plan_decomposition,
    plan_delta_listed,
    plan_order,
    plan_review,
)
from evals.graders.plan_build import (
    plan_builds,
    plan_project_exports,
    plan_runs_in_openfn,
    plan_workflows_valid,
)
from evals.graders.runtime import runs_in_openfn
from evals.graders.structure import equal_except, expected_structure
from evals.scenario import Scenario

DETERMINISTIC: tuple[Grader, ...] = (
    completed,
    expected_structure,
    equal_except,
    ids_preserved,
    document_valid,
    mutation_policy,
    asked_question,
    confirmation,
    route,
    reply_text,
    reply_matches_diff,
    within_budget,
)
PLAN_DETERMINISTIC: tuple[Grader, ...] = (
    completed,
    plan_review,
    plan_decomposition,
    plan_order,
    plan_contracts,
    plan_delta_listed,
    plan_builds,
    plan_workflows_valid,
    plan_project_exports,
)


def grade_deterministic(scenario: Scenario, outcome: RunOutcome) -> list[GradeResult]:
    results = []
    for grader in PLAN_DETERMINISTIC if scenario.plan is not None else DETERMINISTIC:
        result = grader(scenario, outcome)
        if result is not None:
            results.append(result)
    return results


async def grade(
    scenario: Scenario, outcome: RunOutcome, judge: Judge | None, *, runtime: bool = True
) -> list[GradeResult]:
    """Every grader; ``runtime=False`` leaves out ``runs_in_openfn`` (node, ~1-2 s a run)."""
    results = grade_deterministic(scenario, outcome)
    plan = scenario.plan is not None
    if runtime:
        executes = plan_runs_in_openfn if plan else runs_in_openfn
        executed = await asyncio.to_thread(executes, scenario, outcome)
        if executed is not None:
            results.append(executed)
    if judge is not None and not plan:
        verdict = await judge.grade(scenario, outcome)
        if verdict is not None:
            results.append(verdict)
    return results


def run_passed(results: list[GradeResult]) -> bool:
    return all(r.passed for r in results if not r.skipped)


__all__ = [
    "DETERMINISTIC",
    "PLAN_DETERMINISTIC",
    "GradeResult",
    "Grader",
    "Judge",
    "JudgeConfig",
    "grade",
    "grade_deterministic",
    "run_passed",
    "runs_in_openfn",
]
