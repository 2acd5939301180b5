"""``propose_plan``: the plan turn's one tool (DESIGN §5a.1).

Its input model is :class:`~tools.plan.model.ProjectPlan`; running it checks the
plan (:func:`~tools.plan.model.check_plan`) and, when it holds, returns the
normalised plan and its contracts. It changes nothing by itself: the plan turn
stores the proposal and pauses for the user's review.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from tools.base import ToolResult, ToolSpec
from tools.plan.model import ProjectPlan, check_plan, contracts

PROPOSE_PLAN: ToolSpec[ProjectPlan] = ToolSpec(
    "propose_plan",
    ProjectPlan,
    "plan",
    spinner="Drafting a plan of {n} workflow{s}…",
    count_field="workflows",
    action="propose the plan",
)


def plan_tool_definitions() -> list[dict[str, Any]]:
    """The tools a plan turn's model gets (shared definitions: do not mutate)."""
    return [PROPOSE_PLAN.definition()]


def run_propose_plan(args: Mapping[str, Any], *, project_slug: str = "") -> ToolResult:
    """Check a proposed plan: ``data`` holds ``plan`` and ``contracts`` when it holds,
    else the result is an error naming every problem (for the model to fix)."""
    try:
        plan = ProjectPlan.model_validate(dict(args))
    except ValidationError as exc:
        where = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}" for e in exc.errors()[:8]
        )
        return ToolResult.failure("invalid_arguments", where, mutating=False)
    problems = check_plan(plan)
    if problems:
        message = " ".join(p.message for p in problems)
        return ToolResult.failure(problems[0].code, message, mutating=False)
    found = contracts(plan, project_slug)
    return ToolResult(
        ok=True,
        message=f"The plan of {len(plan.workflows)} workflows is shown to the user for review.",
        data={
            "plan": plan.model_dump(mode="json"),
            "contracts": [c.model_dump(mode="json") for c in found],
        },
    )
