"""A plan turn of the offline model: a spec (or feedback on a plan) -> ``propose_plan``.

On a plan turn (a project session whose planner is offered ``propose_plan``) the
user's text is a spec, read by :func:`.spec.read_spec`, or, while a proposed plan
is being revised, feedback on it, applied by :func:`.spec_revise.revise_plan`. A
plan becomes one ``propose_plan`` call; a refusal is the answer, and nothing is
proposed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agents.models.base import RequestContext
from agents.offline.grammar import oxford
from agents.offline.plan import Reply
from agents.offline.planner import plan as offline_plan
from agents.offline.spec import Refusal, read_spec_noted
from agents.offline.spec_revise import revise_plan_noted
from agents.plan.requests import build_request
from tools.document import WorkflowDocument
from tools.document.redaction import redact
from tools.plan import ProjectPlan
from tools.plan.tool import PROPOSE_PLAN as PROPOSE_PLAN_TOOL

PROPOSE_PLAN = PROPOSE_PLAN_TOOL.name


def plan_turn(context: RequestContext) -> ProjectPlan | Refusal:
    return plan_turn_noted(context)[0]


def plan_turn_noted(context: RequestContext) -> tuple[ProjectPlan | Refusal, list[str]]:
    """:func:`plan_turn`, and what each name the user typed became to fit OpenFn's name
    rule, when one had to change (said with the proposal)."""
    project = context.project or {}
    plan = ProjectPlan.model_validate(project["plan"]) if project.get("plan") else None
    if project.get("revising") and plan is not None:
        outcome, notes = revise_plan_noted(plan, context.user_text)
    else:
        # A spec for a project built before: its workflows keep their keys (a precise delta).
        slug = str(project.get("slug") or "")
        outcome, notes = read_spec_noted(context.user_text, slug, known=plan)
    if isinstance(outcome, Refusal):
        return outcome, []
    revised = bool(project.get("revising") and plan is not None)
    checked = buildable(outcome, revised=revised, now=context.now)
    return checked, notes if isinstance(checked, ProjectPlan) else []


def buildable(
    plan: ProjectPlan, *, now: datetime | None, revised: bool = False
) -> ProjectPlan | Refusal:
    """``plan`` if the offline planner builds every workflow of it from its build request
    (as the approved plan's builds will); otherwise what it would say instead, so that a
    plan is never proposed that the offline builds would refuse. Each build request is
    made at ``now`` (the plan turn's request's time)."""
    empty = redact(WorkflowDocument.new().structure)
    doubts: list[str] = []
    for workflow in plan.workflows:
        request = RequestContext(user_text=build_request(workflow, plan), structure=empty, now=now)
        answer = offline_plan(request)
        if isinstance(answer, Reply):
            said = "\n".join(f"  {line}" for line in answer.text.strip().split("\n"))
            doubts.append(f'- "{workflow.name}":\n{said}')
    if not doubts:
        return plan
    if revised:
        lead = "I could not build every workflow of the revised plan, so the plan is unchanged."
    else:
        lead = "I read the spec, but I could not build every workflow from its steps, so "
        lead += "nothing was changed."
    return Refusal(f"{lead} What the offline builder says:\n" + "\n".join(doubts))


def intro(plan: ProjectPlan, notes: list[str] | None = None) -> str:
    """What is said before the call: the plan in one line, and ``notes`` (names changed to
    fit OpenFn's name rule, repeated in the final answer)."""
    said = f"Proposing a plan of {len(plan.workflows)} workflows, built in this order: " + (
        " → ".join(plan.order) + "."
    )
    return " ".join([said, *dict.fromkeys(notes or [])])


def proposed_text(args: dict[str, Any], result: str, is_error: bool) -> str:
    """The final answer after ``propose_plan`` ran: what its result says, briefly."""
    said = " ".join(result.split())
    if is_error:
        return f"The plan could not be proposed: {said[:400]} Nothing was built."
    names = [str(w.get("name")) for w in args.get("workflows") or [] if isinstance(w, dict)]
    head = f"Proposed a plan of {len(names)} workflows ({oxford(names)})." if names else ""
    return " ".join(part for part in (head, said[:400]) if part) or "Proposed a plan."
