"""Offline plan mode end to end, through the real plan graph: the offline model reads
the spec, revises the plan from feedback, and builds every workflow with its hand-offs."""

from __future__ import annotations

from agents.offline import OfflineModel
from tests.agents.offline.plan_helpers import SPECS, wired
from tests.agents.plan.helpers import PlanHarness, proposed
from tools.document import WorkflowDocument

SPEC = (SPECS / "four_processes.md").read_text()


async def test_a_spec_is_proposed_revised_and_built() -> None:
    harness = PlanHarness(OfflineModel())  # type: ignore[arg-type]
    turn_id, events = await harness.start(SPEC)
    first = proposed(events)
    assert [w.key for w in first.plan.workflows] == [
        "intake",
        "coverage-check",
        "document-verification",
        "status-report",
    ]
    assert {(c.source, c.target) for c in first.contracts} == {
        ("intake", "coverage-check"),
        ("intake", "document-verification"),
    }

    events = await harness.answer(turn_id, False, "rename Coverage check to Eligibility check")
    second = proposed(events)
    assert second.revision == first.revision + 1
    assert second.plan.by_key()["coverage-check"].name == "Eligibility check"

    events = await harness.answer(turn_id, True)
    built = [p for p in wired(events, "plan.progress") if p["status"] == "built"]
    assert [p["workflow_key"] for p in built] == [
        "intake",
        "coverage-check",
        "document-verification",
        "status-report",
    ]
    ids = {str(p["workflow_key"]): str(p["workflow_id"]) for p in built}
    docs = {key: WorkflowDocument.from_yaml(harness.workspace.yaml(i)) for key, i in ids.items()}
    assert docs["coverage-check"].structure.name == "Eligibility check"
    report = docs["status-report"].structure
    assert [t.cron_expression for t in report.triggers.values()] == ["0 7 * * 1-5"]
    # Every planned step is a job (the hand-off steps come on top of them).
    for key, doc in docs.items():
        steps = first.plan.by_key()[key].steps
        assert len(doc.structure.jobs) >= len(steps)
    assert len(docs["intake"].structure.jobs) > 3  # Intake hands off to two workflows
    assert wired(events, "turn.completed")


async def test_unclear_feedback_keeps_the_plan_under_review() -> None:
    harness = PlanHarness(OfflineModel())  # type: ignore[arg-type]
    turn_id, events = await harness.start(SPEC)
    first = proposed(events)
    events = await harness.answer(turn_id, False, "make it better")
    again = proposed(events)
    assert again.plan == first.plan
    assert "the plan is unchanged" in again.question


async def test_prose_is_answered_and_nothing_is_proposed() -> None:
    harness = PlanHarness(OfflineModel())  # type: ignore[arg-type]
    _, events = await harness.start("# Referral intake system\n\nWe take referrals in.")
    assert wired(events, "plan.proposed") == []
    (message,) = wired(events, "message")
    assert "nothing was changed" in str(message["text"])
    assert harness.workspace.records == []
