"""Plan turns of the offline model, and building each planned workflow from its request.

Every workflow of every example spec is built by the offline planner through the
real turn graph from :func:`agents.plan.requests.build_request`, on an empty
document: the workflow it builds has the plan's name, trigger and one step a
planned step.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agents.models.base import ModelRequest, ModelResponse, RequestContext
from agents.models.offline import OfflineModel
from agents.models.offline.spec import read_spec
from agents.plan.requests import build_request, plan_context
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument
from tools.plan import ProjectPlan, contracts

SPECS = Path(__file__).parent / "specs"
PROPOSE_PLAN_TOOL: dict[str, Any] = {
    "name": "propose_plan",
    "description": ProjectPlan.__doc__,
    "input_schema": ProjectPlan.model_json_schema(),
}


def example(name: str) -> ProjectPlan:
    plan = read_spec((SPECS / name).read_text(), "project")
    assert isinstance(plan, ProjectPlan)
    return plan


BUILDS = [
    (spec.name, workflow.key)
    for spec in sorted(SPECS.glob("*.md"))
    for workflow in example(spec.name).workflows
]


@pytest.mark.parametrize(("spec", "key"), BUILDS)
def test_each_planned_workflow_builds_from_its_request(spec: str, key: str) -> None:
    plan = example(spec)
    item = plan.by_key()[key]
    outcome = run_turn(WorkflowDocument.new(), build_request(item, plan))
    assert [name for name, _ in outcome.tool_calls][:1] == ["create_workflow"]
    structure = outcome.doc.structure
    assert structure.name == item.name
    assert len(structure.jobs) == len(item.steps), outcome.final_text
    (trigger,) = structure.triggers.values()
    assert trigger.type == item.trigger.type
    assert trigger.cron_expression == item.trigger.cron_expression


def test_build_request_shape() -> None:
    plan = example("four_processes.md")
    report = plan.by_key()["status-report"]
    assert build_request(report, plan) == (
        'Create a workflow called "Status report":\n'
        "Schedule: cron 0 7 * * 1-5\n"
        "1. Fetch the open referrals over http\n"
        "2. Summarise the referrals by status\n"
        "3. Post the summary to the team channel over http"
    )
    assert build_request(plan.by_key()["intake"], plan).split("\n")[1] == "Trigger: webhook"


def test_plan_context_marks_the_workflow_and_its_hand_offs() -> None:
    plan = example("four_processes.md")
    found = contracts(plan, "referrals")
    intake = plan_context(plan, plan.by_key()["intake"], found)
    assert "1. Intake (intake): Takes in new referrals" in intake
    assert "<- building now" in intake.split("\n")[2]
    assert "hands Intake result to Coverage check" in intake
    assert "hands Intake result to Document verification" in intake
    coverage = plan_context(plan, plan.by_key()["coverage-check"], found)
    assert "receives Intake result from Intake" in coverage
    assert "referrals-coverage-check" in coverage
    assert "[cron 0 7 * * 1-5]" in coverage


# --------------------------------------------------------------------------- the hook


def ask(
    text: str,
    *,
    project: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None = None,
    messages: list[dict[str, Any]] | None = None,
) -> ModelResponse:
    request = ModelRequest(
        role="planner",
        system="",
        messages=messages or [{"role": "user", "content": text}],
        tools=[PROPOSE_PLAN_TOOL] if tools is None else tools,
        context=RequestContext(user_text=text, project=project),
    )
    return asyncio.run(OfflineModel().create(request))


def project(plan: ProjectPlan | None = None, revising: bool = False) -> dict[str, Any]:
    return {
        "name": "Referrals",
        "slug": "referrals",
        "workflows": [],
        "plan": plan.model_dump(mode="json") if plan else None,
        "revising": revising,
    }


def test_a_spec_on_a_plan_turn_is_one_propose_plan_call() -> None:
    text = (SPECS / "four_processes.md").read_text()
    response = ask(text, project=project())
    assert response.stop_reason == "tool_use"
    (use,) = response.tool_uses
    assert use["name"] == "propose_plan"
    assert ProjectPlan.model_validate(use["input"]) == read_spec(text)
    assert "intake → coverage-check" in response.text


def test_a_text_that_is_not_a_spec_is_answered_and_nothing_is_proposed() -> None:
    response = ask("# Referral intake system\n\nWe take referrals in.", project=project())
    assert response.stop_reason == "end_turn" and response.tool_uses == []
    assert "nothing was changed" in response.text


def test_feedback_while_revising_gives_the_revised_plan() -> None:
    plan = example("four_processes.md")
    response = ask("remove Status report", project=project(plan, revising=True))
    (use,) = response.tool_uses
    revised = ProjectPlan.model_validate(use["input"])
    assert [w.key for w in revised.workflows] == [
        "intake",
        "coverage-check",
        "document-verification",
    ]
    unclear = ask("make it nicer", project=project(plan, revising=True))
    assert unclear.tool_uses == [] and "the plan is unchanged" in unclear.text


def test_after_the_propose_plan_result_a_short_answer() -> None:
    text = (SPECS / "four_processes.md").read_text()
    first = ask(text, project=project())
    (use,) = first.tool_uses
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": use["id"],
        "content": "Plan approved.",
    }
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": text},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [result]},
    ]
    done = ask(text, project=project(), messages=messages)
    assert done.stop_reason == "end_turn"
    assert done.text.startswith("Proposed a plan of 4 workflows (Intake, Coverage check,")
    assert "Plan approved." in done.text
    result.update(content="Error: the plan has a cycle", is_error=True)
    failed = ask(text, project=project(), messages=messages)
    assert failed.text.startswith("The plan could not be proposed: Error: the plan has a cycle")


def test_without_propose_plan_a_project_turn_plans_as_usual() -> None:
    # A build run inside a project: its request is an ordinary build.
    plan = example("four_processes.md")
    request = build_request(plan.by_key()["intake"], plan)
    response = ask(request, project=project(plan), tools=[{"name": "create_workflow"}])
    assert [u["name"] for u in response.tool_uses] == ["create_workflow"]
