"""Revising a proposed plan from feedback (offline): the forms understood, and refusals
that leave the plan as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.spec import Refusal, read_spec
from agents.offline.spec_revise import revise_plan
from tools.plan import ProjectPlan, check_plan, contracts, plan_delta

SPECS = Path(__file__).parent / "specs"


@pytest.fixture
def plan() -> ProjectPlan:
    found = read_spec((SPECS / "four_processes.md").read_text())
    assert isinstance(found, ProjectPlan)
    return found


def revised(plan: ProjectPlan, feedback: str) -> ProjectPlan:
    before = plan.model_dump()
    outcome = revise_plan(plan, feedback)
    assert isinstance(outcome, ProjectPlan), outcome
    assert check_plan(outcome) == []
    assert plan.model_dump() == before  # the proposal it started from is not changed
    return outcome


def refused(plan: ProjectPlan, feedback: str) -> str:
    before = plan.model_dump()
    outcome = revise_plan(plan, feedback)
    assert isinstance(outcome, Refusal), outcome
    assert plan.model_dump() == before
    assert "unchanged" in outcome.text
    return outcome.text


def test_remove_a_workflow(plan: ProjectPlan) -> None:
    new = revised(plan, "remove Status report")
    assert [w.key for w in new.workflows] == ["intake", "coverage-check", "document-verification"]
    assert plan_delta(plan, new).removed == ["status-report"]
    assert new.order == ["intake", "coverage-check", "document-verification"]


def test_remove_several_workflows(plan: ProjectPlan) -> None:
    new = revised(plan, "remove Status report and Document verification")
    assert [w.key for w in new.workflows] == ["intake", "coverage-check"]
    # Two names, one of them not in the plan: the refusal names that one (not the whole
    # phrase as one name), says the other was understood, and nothing is removed.
    text = refused(plan, "remove Status report and Triage")
    assert text.startswith('There is no workflow called "Triage" in the plan (it has ')
    assert 'I found "Status report" but removed nothing' in text
    assert "Status report and Triage" not in text
    # All or nothing also over several lines: the first removal is not kept either.
    text = refused(plan, "remove Document verification\nremove Status report, Triage and Audit")
    assert text.startswith('I understood "remove Document verification", but not all')
    assert 'There is no workflow called "Triage" or "Audit" in the plan' in text
    text = refused(plan, 'remove "Status report" and "Triage".')
    assert text.startswith('There is no workflow called "Triage" in the plan')


def test_removing_a_workflow_others_use_drops_those_hand_offs(plan: ProjectPlan) -> None:
    new = revised(plan, "drop the Intake workflow")
    by_key = new.by_key()
    assert "intake" not in by_key
    assert by_key["coverage-check"].depends_on == []
    assert by_key["coverage-check"].inputs == []
    assert contracts(new) == []


def test_rename_keeps_the_key(plan: ProjectPlan) -> None:
    new = revised(plan, 'Please rename coverage-check to "Eligibility check, payer side".')
    workflow = new.by_key()["coverage-check"]
    assert workflow.name == "Eligibility check payer side"  # as the document will name it
    assert [(c.key, c.fields) for c in plan_delta(plan, new).changed] == [
        ("coverage-check", ["name"])
    ]


def test_dependencies_removed_and_added(plan: ProjectPlan) -> None:
    new = revised(plan, "Document verification should not depend on Intake")
    verification = new.by_key()["document-verification"]
    assert verification.depends_on == [] and verification.inputs == []
    new = revised(new, "Document verification uses Coverage check's result")
    by_key = new.by_key()
    assert by_key["document-verification"].depends_on == ["coverage-check"]
    assert by_key["coverage-check"].outputs == ["Coverage check result"]
    assert by_key["document-verification"].inputs == ["Coverage check result"]
    assert new.order == ["intake", "coverage-check", "document-verification", "status-report"]
    assert ("coverage-check", "document-verification") in {
        (c.source, c.target) for c in contracts(new)
    }


def test_a_dependency_that_closes_a_cycle_is_refused(plan: ProjectPlan) -> None:
    text = refused(plan, "Intake uses Coverage check's result")
    assert "intake -> coverage-check -> intake" in text


def test_schedules_and_webhooks(plan: ProjectPlan) -> None:
    new = revised(plan, "run Intake every day at 7")
    assert new.by_key()["intake"].trigger.model_dump() == {
        "type": "cron",
        "cron_expression": "0 7 * * *",
    }
    new = revised(plan, "run Status report on a webhook")
    assert new.by_key()["status-report"].trigger.type == "webhook"
    assert "cannot also run on a schedule" in refused(plan, "run Coverage check every day at 7")
    assert "runs on a schedule" in refused(plan, "Status report uses Intake's result")


def test_add_a_step(plan: ProjectPlan) -> None:
    new = revised(plan, "add a step to Intake: Email the coordinator.")
    assert new.by_key()["intake"].steps[-1] == "Email the coordinator"
    assert [(c.key, c.fields) for c in plan_delta(plan, new).changed] == [("intake", ["steps"])]


def test_several_changes_one_per_line(plan: ProjectPlan) -> None:
    new = revised(plan, "rename Intake to Referral intake\nremove Status report")
    assert new.by_key()["intake"].name == "Referral intake"
    assert "status-report" not in new.by_key()


def test_a_whole_new_spec_is_read_as_the_revision(plan: ProjectPlan) -> None:
    text = (
        (SPECS / "four_processes.md").read_text().replace("Every weekday at 7.", "Every day at 6.")
    )
    new = revised(plan, text)
    assert new.by_key()["status-report"].trigger.cron_expression == "0 6 * * *"
    assert [(c.key, c.fields) for c in plan_delta(plan, new).changed] == [
        ("status-report", ["trigger"])
    ]


@pytest.mark.parametrize(
    ("feedback", "says"),
    [
        ("make it nicer", 'I didn\'t understand "make it nicer"'),
        ("remove Triage", 'There is no workflow called "Triage"'),
        ("rename Triage to Sorting", 'There is no workflow called "Triage"'),
        ("Coverage check should not depend on Status report", "does not depend on"),
        ("rename Intake to Coverage check", "already called"),
        # The first change is fine, the second is not understood: nothing changes.
        ("remove Status report\nand also make it faster", "I didn't understand"),
        ("", "I didn't understand"),
    ],
)
def test_unclear_feedback_is_refused(plan: ProjectPlan, feedback: str, says: str) -> None:
    text = refused(plan, feedback)
    assert says in text


@pytest.mark.parametrize(
    "feedback",
    [
        "rename Coverage check to Eligibility check. merge the two checks into one workflow",
        "rename Coverage check to Eligibility check. Merge the two checks into one workflow.",
        "rename Coverage check to Eligibility check; merge the two checks into one workflow",
        "rename Coverage check to Eligibility check and then merge the two checks into one",
        "rename Coverage check to Eligibility check\nmerge the two checks into one workflow",
    ],
)
def test_a_part_not_understood_changes_nothing_and_says_what_was(
    plan: ProjectPlan, feedback: str
) -> None:
    # Each sentence is a request of its own, however it starts: the second is never read
    # as part of the new name, and nothing changes while one of them is not understood.
    text = refused(plan, feedback)
    assert 'I understood "rename Coverage check to Eligibility check"' in text
    assert "I didn't understand \"merge the two checks into one" in text.replace("Merge", "merge")
    assert "Eligibility check merge" not in text


@pytest.mark.parametrize(
    "feedback",
    [
        "rename Coverage check to Eligibility check. remove Status report",
        "rename Coverage check to Eligibility check; remove Status report",
        "rename Coverage check to Eligibility check and then remove Status report",
    ],
)
def test_several_changes_one_per_sentence(plan: ProjectPlan, feedback: str) -> None:
    new = revised(plan, feedback)
    assert [w.name for w in new.workflows] == [
        "Intake",
        "Eligibility check",
        "Document verification",
    ]
