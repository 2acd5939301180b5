"""Building each planned workflow from its request (``agents.plan.requests``).

Every workflow of every example spec is built by the offline planner through the
real turn graph from :func:`agents.plan.requests.build_request`, on an empty
document: the workflow it builds has the plan's name, trigger and one step a
planned step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.spec import read_spec
from agents.plan.requests import build_request, plan_context
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument
from tools.plan import ProjectPlan, contracts

SPECS = Path(__file__).parent / "specs"


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


def test_a_name_with_commas_and_colons_is_built_whole() -> None:
    plan = example("four_processes.md")
    item = plan.by_key()["coverage-check"].model_copy(update={"name": "Eligibility: payer, plan"})
    outcome = run_turn(WorkflowDocument.new(), build_request(item, plan))
    # The name is read whole (the document keeps letters, digits, spaces, "_" and "-").
    assert outcome.doc.structure.name == "Eligibility payer plan"
    assert len(outcome.doc.structure.jobs) == 3
