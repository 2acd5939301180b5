"""Plan mode in the terminal client: the plan as text, answers, progress lines, the
project listing, and asking for an answer on scripted input."""

from __future__ import annotations

import asyncio
import copy
import io
from pathlib import Path
from typing import Any

import pytest

from app.client import plan
from app.client.terminal import LineReader, Output
from tests.client.frames import CONTRACTS, PLAN


def frame(**extra: Any) -> dict[str, Any]:
    return {
        "type": "plan.proposed",
        "turn_id": "t1",
        "request_id": "r1",
        "question": "Build these 2 workflows?",
        "plan": copy.deepcopy(PLAN),
        "contracts": CONTRACTS,
        "delta": None,
        "revision": 1,
        **extra,
    }


def test_review_from_reads_a_frame_and_a_pending_confirmation_alike() -> None:
    from_frame = plan.review_from(frame())
    pending = {
        "turn_id": "t1",
        "request_id": "r1",
        "question": "Build these 2 workflows?",
        "plan": {"plan": copy.deepcopy(PLAN), "contracts": CONTRACTS, "delta": None, "revision": 1},
    }
    assert from_frame is not None
    assert from_frame == plan.review_from(pending)
    assert from_frame["request_id"] == "r1" and from_frame["revision"] == 1
    # A plain confirmation (no plan) is not a review.
    assert plan.review_from({"turn_id": "t", "request_id": "r", "question": "Remove?"}) is None
    assert plan.review_from(None) is None


def test_the_plan_reads_in_build_order_with_triggers_steps_and_hand_offs() -> None:
    review = plan.review_from(frame())
    assert review is not None
    assert plan.render_plan(review) == [
        "Proposed plan, revision 1: 2 workflows",
        "  Intake, then the coverage check.",
        "  1. Referral intake [intake] · cron 0 7 * * *",
        "     Take referrals in.",
        "     inputs: none · outputs: referral",
        "  2. Coverage check [coverage] · webhook, after Referral intake",
        "     Check the patient's coverage.",
        "     inputs: referral · outputs: coverage",
        "       1) Look up the plan",
        "       2) Record it",
        "  Build order: Referral intake → Coverage check",
        "  Hand-offs:",
        "    Referral intake → Coverage check: referral (webhook /i/p-coverage)",
    ]


def test_a_review_contract_says_who_decides_and_where_the_decision_goes() -> None:
    reviewed = [{**CONTRACTS[0], "via": "review", "reviewer": "intake coordinator"}]
    review = plan.review_from(frame(contracts=reviewed))
    assert review is not None
    assert plan.render_plan(review)[-1] == (
        "    Referral intake → Coverage check: referral (reviewed by the intake coordinator; "
        "the decision comes to /i/p-coverage)"
    )


def test_a_delta_lists_what_is_added_changed_and_removed() -> None:
    delta = {
        "added": ["coverage"],
        "changed": [{"key": "intake", "fields": ["trigger", "depends_on"]}],
        "removed": ["old"],
        "unchanged": [],
    }
    review = plan.review_from(frame(delta=delta, revision=3, contracts=[]))
    assert review is not None
    lines = plan.render_plan(review)
    assert lines[0] == "Proposed plan, revision 3: 2 workflows"
    assert lines[2:6] == [
        "  Changes from the plan built before:",
        "    + added coverage",
        "    ~ changed intake (trigger, depends on)",
        "    - removed old (its workflow is kept as it is)",
    ]
    assert "  1. Referral intake [intake] (changed) · cron 0 7 * * *" in lines
    assert any(line.startswith("  2. Coverage check [coverage] (new)") for line in lines)
    assert lines[-1] == "  Hand-offs: none (the workflows run independently)"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("a", plan.PlanAnswer("approve")),
        (" Approve ", plan.PlanAnswer("approve")),
        ("y", plan.PlanAnswer("approve")),
        ("r", plan.PlanAnswer("reject")),
        ("no", plan.PlanAnswer("reject")),
        ("d", "adjust"),
        ("adjust: merge the checks", plan.PlanAnswer("adjust", "merge the checks")),
        ("approve it all", None),
        ("maybe", None),
        ("", None),
    ],
)
def test_parse_answer(text: str, answer: object) -> None:
    assert plan.parse_answer(text) == answer


def test_answers_become_confirm_frames() -> None:
    assert plan.PlanAnswer("approve").frame("r1") == {
        "type": "confirm",
        "request_id": "r1",
        "approved": True,
    }
    assert plan.PlanAnswer("reject").frame("r1") == {
        "type": "confirm",
        "request_id": "r1",
        "approved": False,
    }
    assert plan.PlanAnswer("adjust", "fewer workflows").frame("r2") == {
        "type": "confirm",
        "request_id": "r2",
        "approved": False,
        "feedback": "fewer workflows",
    }


def test_progress_lines() -> None:
    names = {"intake": "Referral intake"}
    building = {"workflow_key": "intake", "workflow_id": None, "status": "building"}
    built = {"workflow_key": "intake", "workflow_id": "w1", "status": "built", "message": "Made"}
    failed = {"workflow_key": "x", "workflow_id": None, "status": "failed", "message": "no adaptor"}
    assert plan.progress_line(building, names) == ("spinner", "Building Referral intake…")
    assert plan.progress_line(built, names) == ("settled", "Built Referral intake (w1)")
    assert plan.progress_line(failed, names) == ("failed", "Could not build x: no adaptor")
    stream = io.StringIO()
    out = Output(stream)
    for item in (building, built, failed):
        plan.show_progress(out, item, names)
    assert stream.getvalue() == (
        "  … Building Referral intake…\n"
        "  ✓ Built Referral intake (w1)\n"
        "  ✗ Could not build x: no adaptor\n"
    )


def test_the_project_listing_shows_the_plan_status_and_each_workflow() -> None:
    record = {
        "status": "partial",
        "plan": PLAN,
        "workflows": {
            "intake": {"status": "built", "workflow_id": "w1"},
            "coverage": {"status": "failed", "workflow_id": None},
        },
        "revision": 2,
    }
    project = {
        "workflows": [
            {"id": "w1", "name": "Referral intake", "version": 3},
            {"id": "w9", "name": "Imported", "version": 1},
        ],
        "plan": record,
    }
    assert plan.project_lines(project) == [
        "Partly built: 1 built, 1 failed.",
        "  Referral intake v3 [intake, built]  (w1)",
        "  Imported v1  (w9)",
    ]
    assert plan.project_lines({"workflows": [], "plan": None})[1] == "  (no workflows yet)"
    assert plan.plan_status_text({**record, "status": "proposed"}) == (
        "Plan revision 2 (2 workflows): waiting for review."
    )
    assert plan.plan_status_text({**record, "status": "rejected"}).startswith("The plan was")


async def scripted(text: str, work: Any) -> tuple[Any, str]:
    stdout = io.StringIO()
    out = Output(stdout)
    lines = LineReader(io.StringIO(text), asyncio.get_running_loop())
    try:
        result = await work(out, lines)
    finally:
        lines.close()
    return result, stdout.getvalue()


def review() -> dict[str, Any]:
    found = plan.review_from(frame())
    assert found is not None
    return found


async def test_asking_repeats_until_an_answer_and_asks_for_the_feedback() -> None:

    async def work(out: Output, lines: LineReader) -> Any:
        return await plan.ask_review(out, lines, review(), read_only=False)

    answer, transcript = await scripted("maybe\nd\n\nd\nmerge them\n", work)
    assert answer == plan.PlanAnswer("adjust", "merge them")
    assert "? Build these 2 workflows?" in transcript
    assert "Answer a (approve), d (adjust, then your feedback) or r (reject)." in transcript
    assert "Say what should change" in transcript

    answer, transcript = await scripted("", work)
    assert answer is None
    assert "the plan stays waiting for review" in transcript


async def test_a_read_only_session_shows_the_plan_and_does_not_ask() -> None:

    async def work(out: Output, lines: LineReader) -> Any:
        return await plan.ask_review(out, lines, review(), read_only=True)

    answer, transcript = await scripted("a\n", work)
    assert answer is None
    assert "Referral intake" in transcript and "read-only" in transcript
    assert plan.ANSWER_PROMPT not in transcript


async def test_read_spec_from_text_a_paste_or_a_file(tmp_path: Path) -> None:
    spec = tmp_path / "spec.md"
    spec.write_text("# Two processes\n", encoding="utf-8")

    async def read(argument: str) -> Any:
        return lambda out, lines: plan.read_spec(out, lines, argument)

    result, _ = await scripted("", await read("one line spec"))
    assert result == "one line spec"
    result, transcript = await scripted("# A\n## 1. B\n.\nafter\n", await read(""))
    assert result == "# A\n## 1. B"
    assert "a line with just" in transcript
    result, _ = await scripted("", await read(f"@{spec}"))
    assert result == "# Two processes\n"
    result, transcript = await scripted("", await read(f"@{tmp_path / 'missing.md'}"))
    assert result is None and "Cannot read" in transcript
    result, transcript = await scripted(".\n", await read(""))
    assert result is None and "Nothing to plan" in transcript
