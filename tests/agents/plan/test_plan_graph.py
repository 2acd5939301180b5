"""The plan graph end to end with an in-memory project: propose, review, build, hand off."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from agents.events import MessageEvent, PlanProgressEvent, PlanProposedEvent, WorkflowEvent
from tests.agents.plan.helpers import (
    COVERAGE,
    INTAKE,
    PlanHarness,
    ProposingModel,
    plan_of,
    proposed,
    workflow,
)
from tests.waiting import wait_until_async
from tools.document import WorkflowDocument
from tools.jobcode import has_code
from tools.plan import PlannedTrigger
from tools.plan.handoff import find_handoff

REPORT = workflow(
    "report",
    "Daily report",
    ["Post the daily totals to the dashboard with http"],
    trigger=PlannedTrigger(type="cron", cron_expression="0 7 * * *"),
)


def _text(events: list) -> str:
    return " ".join(e.text for e in events if isinstance(e, MessageEvent))


async def test_a_proposal_pauses_for_review_and_is_stored_first() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    _, events = await harness.start("the spec")
    review = proposed(events)
    assert events[-1] is review  # the turn ends paused on it
    assert [w.key for w in review.plan.workflows] == ["intake", "coverage"]
    assert review.plan.order == ["intake", "coverage"]
    assert [(c.source, c.target, c.data) for c in review.contracts] == [
        ("intake", "coverage", ["referral"])
    ]
    (record,) = harness.workspace.records
    assert record.status == "proposed" and record.request_id == review.request_id
    assert not harness.workspace.workflows  # nothing is built before the answer


async def test_approval_builds_leaf_first_with_progress_versions_and_a_real_hand_off() -> None:
    harness = PlanHarness(ProposingModel(plan_of(COVERAGE, INTAKE)))
    turn_id, events = await harness.start("the spec")
    assert proposed(events).plan.order == ["intake", "coverage"]
    events = await harness.answer(turn_id, True)
    progress = [(e.workflow_key, e.status) for e in events if isinstance(e, PlanProgressEvent)]
    assert progress == [
        ("intake", "building"),
        ("intake", "built"),
        ("coverage", "building"),
        ("coverage", "built"),
    ]
    record = harness.workspace.records[-1]
    assert record.status == "built" and record.built_plan == record.plan
    ids = {key: outcome.workflow_id for key, outcome in record.workflows.items()}
    frames = [e for e in events if isinstance(e, WorkflowEvent)]
    assert frames and {f.workflow_id for f in frames} == set(ids.values())
    for key, workflow_id in ids.items():
        committed = harness.workspace.workflows[workflow_id].versions
        assert [v["version"] for v in committed] == list(range(1, len(committed) + 1))
        doc = WorkflowDocument.from_yaml(harness.workspace.yaml(workflow_id))
        assert doc.structure.jobs and all(
            has_code(j.body or "") for j in doc.structure.jobs.values()
        ), key
    source = WorkflowDocument.from_yaml(harness.workspace.yaml(ids["intake"])).structure
    target = WorkflowDocument.from_yaml(harness.workspace.yaml(ids["coverage"])).structure
    assert find_handoff(source, "referrals-coverage") is not None
    assert [t.custom_path for t in target.triggers.values()] == ["referrals-coverage"]
    assert "Built 2 of 2 workflows" in _text(events) and "1 hand-off" in _text(events)


async def test_feedback_revises_the_plan_in_the_same_turn() -> None:
    revised = plan_of(INTAKE, COVERAGE, REPORT)
    model = ProposingModel(plan_of(INTAKE, COVERAGE), revised)
    harness = PlanHarness(model)
    turn_id, events = await harness.start("the spec")
    first = proposed(events)
    events = await harness.answer(turn_id, False, feedback="Add the daily report too.")
    second = proposed(events)
    assert second.revision == first.revision + 1 and second.request_id != first.request_id
    assert [w.key for w in second.plan.workflows] == ["intake", "coverage", "report"]
    request = model.plan_requests[-1]
    assert request.context.project is not None and request.context.project["revising"] is True
    assert request.context.user_text == "Add the daily report too."
    assert request.context.project["plan"]["order"] == ["intake", "coverage"]
    assert not harness.workspace.workflows


async def test_feedback_the_planner_cannot_act_on_keeps_the_same_plan_under_review() -> None:
    """The same plan, asked again under a new request id (the first one was answered:
    a confirmation is answered once), with what the planner said as a message."""
    model = ProposingModel(plan_of(INTAKE), "I did not understand that.", "Nor that.")
    harness = PlanHarness(model)
    turn_id, events = await harness.start("the spec")
    first = proposed(events)
    events = await harness.answer(turn_id, False, feedback="make it nicer")
    again = proposed(events)
    assert again.plan == first.plan and again.revision == first.revision
    assert again.request_id != first.request_id
    assert again.question.startswith("I did not understand that.")
    assert _text(events) == "I did not understand that."
    # Stored before the review went out, on the new id: the record is what answers check.
    record = harness.workspace.records[-1]
    assert (record.status, record.request_id) == ("proposed", again.request_id)
    assert record.revision == first.revision and record.plan == first.plan
    events = await harness.answer(turn_id, False, feedback="still nicer")
    third = proposed(events)
    assert third.request_id not in (first.request_id, again.request_id)
    assert harness.workspace.records[-1].request_id == third.request_id
    events = await harness.answer(turn_id, True)
    assert harness.workspace.records[-1].status == "built"


async def test_feedback_that_takes_the_plan_back_to_the_built_one_withdraws_it() -> None:
    """Nothing to build, so nothing is left waiting for review either."""
    coverage = workflow("coverage", "Coverage check", ["Post the referral with http"])
    model = ProposingModel(plan_of(INTAKE), plan_of(INTAKE, coverage), plan_of(INTAKE))
    harness = PlanHarness(model)
    turn_id, _ = await harness.start("the spec")
    await harness.answer(turn_id, True)
    turn_id, events = await harness.start("the spec with coverage")
    assert proposed(events).delta is not None
    events = await harness.answer(turn_id, False, feedback="leave coverage out after all")
    assert not [e for e in events if isinstance(e, PlanProposedEvent)]
    assert "nothing to change" in _text(events)
    record = harness.workspace.records[-1]
    assert (record.status, record.request_id) == ("rejected", None)
    assert record.built_plan is not None and record.built_plan.by_key().keys() == {"intake"}


async def test_a_plain_no_rejects_and_builds_nothing() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    turn_id, _ = await harness.start("the spec")
    events = await harness.answer(turn_id, False)
    assert harness.workspace.records[-1].status == "rejected"
    assert not harness.workspace.workflows
    assert "rejected" in _text(events)


async def test_a_plan_that_does_not_hold_goes_back_to_the_model_as_an_error() -> None:
    loop_a = workflow("a", "A", ["Post it with http"], after=["b"])
    loop_b = workflow("b", "B", ["Post it with http"], after=["a"])
    bad = plan_of(loop_a, loop_b)
    model = ProposingModel(bad, plan_of(INTAKE))
    harness = PlanHarness(model)
    _, events = await harness.start("the spec")
    assert [w.key for w in proposed(events).plan.workflows] == ["intake"]
    retry = model.plan_requests[1].messages[-1]["content"][0]
    assert retry["type"] == "tool_result" and retry["is_error"] is True
    assert "dependency_cycle" in retry["content"]


async def test_no_plan_at_all_is_an_answer_that_changes_nothing() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE)))
    harness.model.proposals.clear()
    harness.model.proposals.append("That is one process; what should happen after intake?")
    _, events = await harness.start("just intake")
    assert not [e for e in events if isinstance(e, PlanProposedEvent)]
    assert _text(events).startswith("That is one process")
    assert harness.workspace.records == []


async def test_read_only_sessions_never_propose() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE)))
    _, events = await harness.start("the spec", read_only=True)
    assert "read-only" in _text(events)
    assert harness.model.plan_requests == [] and harness.workspace.records == []


async def test_one_failing_workflow_is_reported_and_the_others_build() -> None:
    vague = workflow("vague", "Vague", ["Post the referral to DHIS2 and Salesforce"])
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, vague, REPORT)))
    turn_id, _ = await harness.start("the spec")
    events = await harness.answer(turn_id, True)
    record = harness.workspace.records[-1]
    assert record.status == "partial"
    assert {k: o.status for k, o in record.workflows.items()} == {
        "intake": "built",
        "vague": "failed",
        "report": "built",
    }
    assert record.workflows["vague"].message
    assert "Vague failed" in _text(events)


@pytest.mark.parametrize("change", ["added", "changed"])
async def test_a_changed_spec_proposes_and_builds_only_the_delta(change: str) -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    turn_id, _ = await harness.start("the spec")
    await harness.answer(turn_id, True)
    built = harness.workspace.records[-1]
    versions = {
        k: len(harness.workspace.workflows[o.workflow_id or ""].versions)
        for k, o in built.workflows.items()
    }
    if change == "added":
        new = plan_of(INTAKE, COVERAGE, REPORT)
    else:
        longer = COVERAGE.model_copy(
            update={"steps": [*COVERAGE.steps, "Post the result to the EHR with http"]}
        )
        new = plan_of(INTAKE, longer)
    harness.model.proposals.append(new)
    turn_id, events = await harness.start("the changed spec")
    delta = proposed(events).delta
    assert delta is not None
    if change == "added":
        assert delta.added == ["report"] and delta.changed == [] and delta.removed == []
    else:
        assert delta.added == [] and [c.key for c in delta.changed] == ["coverage"]
        assert delta.changed[0].fields == ["steps"]
    events = await harness.answer(turn_id, True)
    record = harness.workspace.records[-1]
    built_now = [
        e.workflow_key for e in events if isinstance(e, PlanProgressEvent) and e.status == "built"
    ]
    assert built_now == (["report"] if change == "added" else ["coverage"])
    assert record.workflows["intake"].status == "unchanged"
    # The untouched workflow kept its versions (its hand-off already existed: no new one).
    intake = built.workflows["intake"].workflow_id or ""
    assert len(harness.workspace.workflows[intake].versions) == versions["intake"]


async def test_the_same_spec_again_is_no_change() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE), plan_of(INTAKE)))
    turn_id, _ = await harness.start("the spec")
    await harness.answer(turn_id, True)
    _, events = await harness.start("the spec")
    assert not [e for e in events if isinstance(e, PlanProposedEvent)]
    assert "nothing to change" in _text(events)


async def test_a_cancelled_build_leaves_a_partial_record_not_building() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    turn_id, _ = await harness.start("the spec")
    first_built = asyncio.Event()

    async def run() -> None:
        async for event in harness.runner.resume(turn_id, True, harness.runtime()):
            if isinstance(event, PlanProgressEvent) and event.status == "built":
                first_built.set()
                await asyncio.sleep(10)  # the turn is cancelled here, mid-build

    task = asyncio.create_task(run())
    await first_built.wait()
    task.cancel()  # as a cancel frame does
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until_async(  # langgraph does not wait for the cancelled node's last write
        lambda: harness.workspace.records[-1].status != "building",
        timeout=5,
        message="the cancelled plan stayed 'building'",
    )
    record = harness.workspace.records[-1]
    assert record.status == "partial"
    assert record.workflows["intake"].status == "built"
    assert record.workflows["coverage"].status == "failed"


async def test_each_build_is_an_ordinary_planner_run_with_the_whole_plan_as_context() -> None:
    model = ProposingModel(plan_of(INTAKE, COVERAGE, summary="Referrals in, then coverage."))
    harness = PlanHarness(model)
    turn_id, _ = await harness.start("the spec")
    await harness.answer(turn_id, True)
    # Each run's first message (the planner appends to its conversation as it goes).
    planner = [r for r in model.build_requests if r.role == "planner"]
    firsts = list(dict.fromkeys(r.messages[0]["content"] for r in planner))
    assert len(firsts) >= 2  # one build run (at least) per workflow
    for text in firsts:
        assert "<project_plan>" in text and "Referrals in, then coverage." in text
        assert "Referral intake (intake)" in text and "Coverage check (coverage)" in text
    assert "<- building now" in firsts[0].split("Coverage check (")[0]


async def test_a_delta_that_drops_a_workflow_removes_the_hand_off_to_it() -> None:
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    turn_id, _ = await harness.start("the spec")
    await harness.answer(turn_id, True)
    intake_id = harness.workspace.records[-1].workflows["intake"].workflow_id or ""
    before = WorkflowDocument.from_yaml(harness.workspace.yaml(intake_id)).structure
    assert find_handoff(before, "referrals-coverage") is not None
    harness.model.proposals.append(plan_of(INTAKE))  # coverage is gone
    turn_id, events = await harness.start("the spec without coverage")
    assert proposed(events).delta is not None
    assert proposed(events).delta.removed == ["coverage"]  # type: ignore[union-attr]
    events = await harness.answer(turn_id, True)
    after = WorkflowDocument.from_yaml(harness.workspace.yaml(intake_id)).structure
    assert find_handoff(after, "referrals-coverage") is None
    assert set(after.jobs) == set(before.jobs) - {find_handoff(before, "referrals-coverage")}
    assert "Removed the hand-offs the plan no longer has from Referral intake" in _text(events)


async def test_a_build_stopped_by_an_error_leaves_a_partial_record_not_building() -> None:
    """The store or the bus going away mid-build (not a PlanwrightError, so not that
    one workflow's failure) fails the turn; the record still says what was built."""
    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    turn_id, _ = await harness.start("the spec")
    real_hold = harness.workspace.hold
    holds = 0

    @contextlib.asynccontextmanager
    async def failing_second(workflow_id: str) -> AsyncIterator[None]:
        nonlocal holds
        holds += 1
        if holds == 2:
            raise ConnectionError("the store went away")
        async with real_hold(workflow_id):
            yield

    harness.workspace.hold = failing_second  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        await harness.answer(turn_id, True)
    record = harness.workspace.records[-1]
    assert record.status == "partial"
    assert record.workflows["intake"].status == "built"
    assert record.workflows["coverage"].status == "failed"
    assert record.workflows["coverage"].message == "The plan turn was stopped by an error."


async def test_a_plan_turn_past_its_deadline_keeps_what_it_built_and_starts_no_more() -> None:
    from agents.models.deadline import Deadline, TurnDeadlineError

    harness = PlanHarness(ProposingModel(plan_of(INTAKE, COVERAGE)))
    turn_id, _ = await harness.start("the spec")
    now = [0.0]
    runtime = harness.runtime()
    runtime.deadline = Deadline(60, clock=lambda: now[0])
    built: list[str] = []
    with pytest.raises(TurnDeadlineError):
        async for event in harness.runner.resume(turn_id, True, runtime):
            if isinstance(event, PlanProgressEvent) and event.status == "built":
                built.append(event.workflow_key)
                now[0] = 61.0  # the first build used up the turn's time
    assert built == ["intake"]
    record = harness.workspace.records[-1]
    assert record.status == "partial"
    assert record.workflows["intake"].status == "built"  # what was built stays built
    assert record.workflows["coverage"].status == "failed"
    intake_id = record.workflows["intake"].workflow_id or ""
    assert harness.workspace.workflows[intake_id].versions[-1]["version"] > 1
