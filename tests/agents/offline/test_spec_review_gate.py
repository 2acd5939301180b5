"""Plan mode with a review gate between two workflows, end to end through the real plan
graph and the offline model: the spec's "After the coordinator reviews Intake's result"
is a ``review`` contract stored with the plan; the source ends by raising the review, the
target starts on the decision webhook with a guarded branch per decision, and both run
in @openfn/runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline import OfflineModel
from agents.offline.spec import Refusal, read_spec
from agents.testrun import LocalRunner, OpenFnRuntimeUnavailable, RunLimits, ensure_installed
from tests.agents.offline.plan_helpers import wired
from tests.agents.plan.helpers import PlanHarness, proposed
from tools.document import WorkflowDocument
from tools.document.conditions import unguarded
from tools.plan import ProjectPlan, contracts
from tools.registry import run_tool
from tools.testrun import RunRequest, SampleResponse

SPEC = """\
# Referral intake

## Intake
- Fetch the referral from the portal over http
- Validate the required fields

## Scheduling
After the intake coordinator reviews Intake's result.
- Book the appointment
- Record the booking
"""


@pytest.mark.parametrize(
    "line",
    [
        "After the intake coordinator reviews Intake's result.",
        "Only once a intake coordinator approves Intake.",
        "Starts when the intake coordinator has reviewed the result of Intake.",
    ],
)
def test_a_reviewed_dependency_is_a_review_contract(line: str) -> None:
    plan = read_spec(SPEC.replace("After the intake coordinator reviews Intake's result.", line))
    assert isinstance(plan, ProjectPlan), plan
    scheduling = plan.by_key()["scheduling"]
    assert (scheduling.review_by, scheduling.depends_on) == ("intake coordinator", ["intake"])
    (contract,) = contracts(plan, "referrals")
    assert (contract.via, contract.reviewer, contract.decisions) == (
        "review",
        "intake coordinator",
        ["approved", "rejected", "corrected"],
    )
    assert contract.webhook_path == "referrals-scheduling"


def test_a_review_with_nothing_to_review_is_refused() -> None:
    text = SPEC.replace(
        "After the intake coordinator reviews Intake's result.",
        "Reviewed by the intake coordinator first.",
    )
    refused = read_spec(text)
    assert isinstance(refused, Refusal)
    assert "nothing's result" in refused.text


async def test_the_plan_builds_the_gate_and_each_decision_takes_its_branch(tmp_path: Path) -> None:
    harness = PlanHarness(OfflineModel())  # type: ignore[arg-type]
    turn_id, events = await harness.start(SPEC)
    first = proposed(events)
    assert [c.via for c in first.contracts] == ["review"]

    events = await harness.answer(turn_id, True)
    built = {
        str(p["workflow_key"]): str(p["workflow_id"])
        for p in wired(events, "plan.progress")
        if p["status"] == "built"
    }
    assert set(built) == {"intake", "scheduling"}
    stored = harness.workspace.records[-1]
    assert [(c.via, c.reviewer) for c in stored.contracts] == [("review", "intake coordinator")]
    intake = WorkflowDocument.from_yaml(harness.workspace.yaml(built["intake"]))
    scheduling = WorkflowDocument.from_yaml(harness.workspace.yaml(built["scheduling"]))

    raise_key = "send-case-to-intake-coordinator-for-review"
    assert intake.structure.jobs[raise_key].credential == "review-queue"
    assert '"/i/referrals-scheduling"' in (intake.structure.jobs[raise_key].body or "")
    (trigger,) = scheduling.structure.triggers.values()
    assert trigger.custom_path == "referrals-scheduling"
    reader = "read-intake-coordinator-decision"
    branches = {
        e.target_job: unguarded(e.condition_expression or "")
        for e in scheduling.structure.edges_from(reader)
    }
    assert branches == {
        "book-appointment": "state.data.decision === 'approved'",
        "record-intake-coordinator-rejection": "state.data.decision === 'rejected'",
        "apply-intake-coordinator-corrections": "state.data.decision === 'corrected'",
    }
    assert wired(events, "turn.completed")

    try:
        runner = LocalRunner(RunLimits(timeout_s=20), ensure_installed())
    except OpenFnRuntimeUnavailable as exc:
        pytest.fail(f"@openfn/runtime is not available: {exc}", pytrace=False)
    portal = SampleResponse(url="https://portal.test/*", body={"id": "r-1"})
    queue = SampleResponse(method="post", url="https://queue.test/reviews", status=202, body={})
    # The fetch step calls its portal by a relative path: as in OpenFn, it runs only with
    # a credential naming the portal's baseUrl, which the user attaches (as in chat).
    fetch = [k for k, j in intake.structure.jobs.items() if k != raise_key and j.credential is None]
    attached = run_tool(intake, "attach_credential", {"credential": "portal", "job_keys": fetch})
    assert attached.ok, attached.text
    raised = await runner.run(
        intake.to_yaml(),
        RunRequest(
            responses=[queue, portal],
            credentials={
                "portal": {"baseUrl": "https://portal.test"},
                "review-queue": {"baseUrl": "https://queue.test"},
            },
        ),
        run_id="intake",
    )
    assert raised.steps[-1].key == raise_key, raised.summary
    assert any(r.url == "https://queue.test/reviews" and r.matched for r in raised.requests)
    for decision, path in (
        ("approved", ["book-appointment"]),
        ("rejected", ["record-intake-coordinator-rejection"]),
        ("corrected", ["apply-intake-coordinator-corrections", "book-appointment"]),
    ):
        payload = {"decision": decision, "case": {"id": "r-1"}, "corrected": {"id": "r-2"}}
        run = await runner.run(scheduling.to_yaml(), RunRequest(input=payload), run_id=decision)
        assert [s.key for s in run.steps][: 1 + len(path)] == [reader, *path], run.summary


async def test_a_review_that_becomes_a_plain_hand_off_leaves_no_review_step() -> None:
    harness = PlanHarness(OfflineModel())  # type: ignore[arg-type]
    turn_id, _ = await harness.start(SPEC)
    events = await harness.answer(turn_id, True)
    built = {
        str(p["workflow_key"]): str(p["workflow_id"])
        for p in wired(events, "plan.progress")
        if p["status"] == "built"
    }
    plain = SPEC.replace("After the intake coordinator reviews Intake's result.", "After Intake.")
    turn_id, events = await harness.start(plain)
    delta = proposed(events).delta
    assert delta is not None
    assert [(c.key, c.fields) for c in delta.changed] == [("scheduling", ["review_by"])]
    await harness.answer(turn_id, True)

    intake = WorkflowDocument.from_yaml(harness.workspace.yaml(built["intake"]))
    bodies = [job.body or "" for job in intake.structure.jobs.values()]
    assert not any("respondTo" in body for body in bodies)
    assert any("/i/referrals-scheduling" in body for body in bodies)  # the hand-off now
