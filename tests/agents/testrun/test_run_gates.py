"""The code and branches add_review_gate, add_status_transition and add_rule_table write,
run in the real @openfn/runtime: every decision, both sides of a transition and every row
of a rule table take their own path."""

from __future__ import annotations

from typing import Any

import pytest

from agents.testrun import LocalRunner
from tests.tools.helpers import build, make_context
from tools.document import WorkflowDocument
from tools.testrun import RunRequest

ROWS = [
    {"when": "orthopedic", "requires": ["imaging"]},
    {"when": "cardiology", "requires": ["EKG report", "labs"]},
    {"when": "behavioral health", "requires": ["clinical summary"], "not_required": ["labs"]},
]


def _decision_workflow() -> str:
    doc = build(
        [
            (
                "add_jobs",
                {
                    "jobs": [
                        {"name": "Schedule visit", "adaptor": "common"},
                        {"name": "Notify provider", "adaptor": "common"},
                        {"name": "Validate referral", "adaptor": "common"},
                    ]
                },
            ),
            (
                "add_review_gate",
                {
                    "part": "resume",
                    "reviewer": "coordinator",
                    "subject": "referral",
                    "resume_path": "intake-review",
                    "on_approved": "schedule-visit",
                    "on_rejected": "notify-provider",
                    "on_corrected": "validate-referral",
                },
            ),
        ],
        make_context(),
    )
    return doc.to_yaml()


@pytest.mark.parametrize(
    ("payload", "path", "case"),
    [
        ({"decision": "approved", "case": {"id": "r-1"}}, ["schedule-visit"], {"id": "r-1"}),
        ({"decision": "rejected", "case": {"id": "r-1"}}, ["notify-provider"], {"id": "r-1"}),
        (
            {
                "decision": "corrected",
                "case": {"id": "r-1", "plan": "PPO"},
                "corrected": {"plan": "HMO"},
            },
            ["apply-coordinator-corrections", "validate-referral"],
            {"id": "r-1", "plan": "HMO"},
        ),
    ],
)
async def test_each_decision_takes_its_own_branch(
    runner: LocalRunner, payload: dict[str, Any], path: list[str], case: dict[str, Any]
) -> None:
    run = await runner.run(_decision_workflow(), RunRequest(input=payload), run_id="decision")

    assert run.status == "succeeded", run.summary
    assert [s.key for s in run.steps] == ["read-coordinator-decision", *path]
    assert run.final_state["data"]["case"] == case


@pytest.mark.parametrize(
    "payload", [{"decision": "maybe"}, {"decision": "corrected", "case": {}}, {}]
)
async def test_a_payload_outside_the_contract_fails_and_takes_no_branch(
    runner: LocalRunner, payload: dict[str, Any]
) -> None:
    run = await runner.run(_decision_workflow(), RunRequest(input=payload), run_id="bad-decision")

    assert run.status == "failed"
    assert [(s.key, s.status) for s in run.steps] == [("read-coordinator-decision", "failed")]
    assert not any(e.fired for e in run.edges if e.source == "read-coordinator-decision")


async def test_the_raise_step_posts_the_case_to_the_review_queue(runner: LocalRunner) -> None:
    doc = build(
        [
            ("set_trigger", {"type": "webhook"}),
            ("add_jobs", {"jobs": [{"name": "Validate referral", "adaptor": "common"}]}),
            ("add_edges", {"edges": [{"source": "webhook", "target": "validate-referral"}]}),
            (
                "add_review_gate",
                {
                    "part": "raise",
                    "reviewer": "coordinator",
                    "subject": "referral",
                    "resume_path": "intake-review",
                    "after": "validate-referral",
                },
            ),
        ],
        make_context(),
    )
    queue = {"method": "post", "url": "https://queue.example/reviews", "status": 201, "body": {}}
    request = RunRequest(
        input={"id": "r-1"},
        responses=[queue],
        configuration={"baseUrl": "https://queue.example"},
    )
    run = await runner.run(doc.to_yaml(), request, run_id="raise")

    assert run.status == "succeeded", run.summary
    assert [(r.method, r.url, r.matched) for r in run.requests] == [
        ("POST", "https://queue.example/reviews", True)
    ]


def _transition_workflow() -> WorkflowDocument:
    return build(
        [
            ("set_trigger", {"type": "webhook"}),
            ("add_jobs", {"jobs": [{"name": "Verify referral", "adaptor": "common"}]}),
            ("add_edges", {"edges": [{"source": "webhook", "target": "verify-referral"}]}),
            (
                "add_status_transition",
                {
                    "after": "verify-referral",
                    "subject": "referral",
                    "status": "active",
                    "otherwise": "on-hold",
                    "checks": [
                        {"name": "coverage is verified"},
                        {"name": "documents are attached"},
                    ],
                },
            ),
        ],
        make_context(),
    )


@pytest.mark.parametrize(
    ("flags", "status"),
    [
        ({"coverageVerified": True, "documentsAttached": True}, "active"),
        ({"coverageVerified": True, "documentsAttached": False}, "on-hold"),
        ({"documentsAttached": True}, "on-hold"),
        ({}, "on-hold"),
    ],
)
async def test_a_transition_advances_only_when_every_check_holds(
    runner: LocalRunner, flags: dict[str, bool], status: str
) -> None:
    run = await runner.run(_transition_workflow().to_yaml(), RunRequest(input=flags), run_id="t")

    assert run.status == "succeeded", run.summary
    assert [s.key for s in run.steps] == [
        "verify-referral",
        "check-referral-active-preconditions",
        f"set-referral-status-to-{status}",
    ]
    assert run.final_state["data"]["status"] == status


async def test_a_failed_check_step_moves_the_status_neither_way(runner: LocalRunner) -> None:
    doc = _transition_workflow()
    # A check whose expression throws: the step fails, and the guard keeps both branches shut.
    yaml = doc.to_yaml().replace(
        "Boolean(state.data?.coverageVerified === true)", "Boolean(state.data.x.y)"
    )
    run = await runner.run(yaml, RunRequest(input={}), run_id="t-fail")

    assert run.status == "failed"
    assert [s.key for s in run.steps] == ["verify-referral", "check-referral-active-preconditions"]


def _table_workflow(items: str | None = None) -> str:
    args: dict[str, Any] = {"name": "Check required documents", "rows": ROWS}
    if items:
        args["items"] = items
    doc = build([("set_trigger", {"type": "webhook"}), ("add_rule_table", args)], make_context())
    return doc.to_yaml()


@pytest.mark.parametrize(
    ("referral", "required", "missing"),
    [
        ({"type": "orthopedic", "documents": ["imaging"]}, ["imaging"], []),
        ({"type": "Orthopedic", "documents": []}, ["imaging"], ["imaging"]),
        ({"type": "cardiology", "documents": ["labs"]}, ["EKG report", "labs"], ["EKG report"]),
        ({"type": "cardiology", "documents": ["ekg report", "Labs"]}, ["EKG report", "labs"], []),
        (
            {"type": "behavioral health", "documents": ["labs"]},
            ["clinical summary"],
            ["clinical summary"],
        ),
        (
            {"type": "behavioral health", "documents": ["clinical summary"]},
            ["clinical summary"],
            [],
        ),
    ],
)
async def test_every_row_of_the_table_is_checked(
    runner: LocalRunner, referral: dict[str, Any], required: list[str], missing: list[str]
) -> None:
    run = await runner.run(_table_workflow(), RunRequest(input=referral), run_id="row")

    assert run.status == "succeeded", run.summary
    data = run.final_state["data"]
    assert (data["required"], data["missing"], data["complete"]) == (required, missing, not missing)


async def test_a_type_the_table_does_not_know_fails_the_step(runner: LocalRunner) -> None:
    run = await runner.run(_table_workflow(), RunRequest(input={"type": "dermatology"}), run_id="u")

    assert run.status == "failed"
    assert 'No rule for "dermatology"' in (run.steps[0].error or "")


async def test_each_referral_of_a_batch_is_checked_on_its_own(runner: LocalRunner) -> None:
    batch = {
        "batch": 7,
        "referrals": [
            {"type": "orthopedic", "documents": []},
            {"type": "cardiology", "documents": ["EKG report", "labs"]},
            {"type": "behavioral health", "documents": ["clinical summary"]},
        ],
    }
    run = await runner.run(_table_workflow("referrals"), RunRequest(input=batch), run_id="each")

    assert run.status == "succeeded", run.summary
    data = run.final_state["data"]
    assert data["batch"] == 7
    assert [(r["missing"], r["complete"]) for r in data["referrals"]] == [
        (["imaging"], False),
        ([], True),
        ([], True),
    ]
    assert "ruleInput" not in run.final_state and "ruleChecked" not in run.final_state
