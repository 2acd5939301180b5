"""add_review_gate, add_status_transition and add_rule_table through run_tool: what they
add, the guards on their branches, the code they write, and what they refuse."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tools.helpers import build, fails, ok
from tools.base import ToolContext
from tools.catalogue.adaptors import load_catalogue
from tools.document import WorkflowDocument
from tools.document.conditions import SUCCESS_GUARD, unguarded
from tools.jobcode import check_job_code

RAISE = {
    "part": "raise",
    "reviewer": "coordinator",
    "subject": "referral",
    "resume_path": "intake-review",
}
RESUME = {
    "part": "resume",
    "reviewer": "coordinator",
    "subject": "referral",
    "resume_path": "intake-review",
    "on_approved": "schedule-visit",
    "on_rejected": "notify-provider",
}


def _code_is_clean(doc: WorkflowDocument, key: str) -> str:
    job = doc.structure.jobs[key]
    assert job.body
    assert check_job_code(job.body, load_catalogue().get(job.adaptor)) == []
    return job.body


def _decision_doc(ctx: ToolContext, *, trigger: dict[str, Any] | None) -> WorkflowDocument:
    jobs = [
        {"name": "Schedule visit", "adaptor": "http"},
        {"name": "Notify provider", "adaptor": "common"},
        {"name": "Validate referral", "adaptor": "common"},
    ]
    args: dict[str, Any] = {"name": "Referral decision", "jobs": jobs, "edges": []}
    if trigger is not None:
        args["trigger"] = trigger
    return build([("create_workflow", args)], ctx)


# ----------------------------------------------------------------------- review gate: raise


def test_raise_adds_a_step_that_posts_the_case_to_the_review_queue(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    result = ok(doc, "add_review_gate", {**RAISE, "after": "notify-team"}, ctx)

    key = "send-referral-to-coordinator-for-review"
    job = doc.structure.jobs[key]
    # Pinned like every new step: the version the adaptor facts list as current.
    http = load_catalogue().get("@openfn/language-http")
    assert http is not None and job.adaptor == f"@openfn/language-http@{http.version}"
    assert job.credential == "review-queue"
    body = _code_is_clean(doc, key)
    assert "post('reviews'" in body
    assert '"/i/intake-review"' in body and '"coordinator"' in body
    edge = doc.structure.find_edge("notify-team", key)
    assert edge is not None and edge.condition_type == "on_job_success"
    assert "/i/intake-review" in result.message


def test_raise_refuses_when_a_step_would_run_without_waiting(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    result = fails(
        doc, "add_review_gate", {**RAISE, "after": "fetch-referrals"}, ctx, "review_gate_not_last"
    )
    assert "'Check coverage'" in result.message


def test_an_escalation_is_a_guarded_branch_beside_the_others(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    when = "state.data.status !== 'active'"
    ok(doc, "add_review_gate", {**RAISE, "after": "fetch-referrals", "when": when}, ctx)

    edge = doc.structure.find_edge("fetch-referrals", "send-referral-to-coordinator-for-review")
    assert edge is not None and edge.condition_type == "js_expression"
    assert edge.condition_expression == f"{SUCCESS_GUARD} && ({when})"
    assert doc.structure.find_edge("fetch-referrals", "check-coverage") is not None


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({**RAISE}, "invalid_arguments"),  # no `after`
        ({**RAISE, "after": "nope"}, "unknown_job"),
        ({**RAISE, "after": "notify-team", "resume_path": "../x"}, "invalid_arguments"),
    ],
)
def test_raise_refusals(
    ctx: ToolContext, doc: WorkflowDocument, args: dict[str, Any], code: str
) -> None:
    fails(doc, "add_review_gate", args, ctx, code)


# ---------------------------------------------------------------------- review gate: resume


def test_resume_starts_on_the_decision_webhook_with_one_guarded_branch_per_decision(
    ctx: ToolContext,
) -> None:
    doc = _decision_doc(ctx, trigger=None)
    ok(doc, "add_review_gate", {**RESUME, "on_corrected": "validate-referral"}, ctx)

    s = doc.structure
    trigger = s.triggers["webhook"]
    assert trigger.type == "webhook" and trigger.custom_path == "intake-review"
    assert [e.target_job for e in s.edges_from("webhook")] == ["read-coordinator-decision"]
    _code_is_clean(doc, "read-coordinator-decision")
    _code_is_clean(doc, "apply-coordinator-corrections")
    branches = {
        e.target_job: (unguarded(e.condition_expression or ""), e.condition_label)
        for e in s.edges_from("read-coordinator-decision")
    }
    assert branches == {
        "schedule-visit": ("state.data.decision === 'approved'", "approved"),
        "notify-provider": ("state.data.decision === 'rejected'", "rejected"),
        "apply-coordinator-corrections": ("state.data.decision === 'corrected'", "corrected"),
    }
    onward = s.find_edge("apply-coordinator-corrections", "validate-referral")
    assert onward is not None and onward.condition_type == "on_job_success"


def test_resume_moves_an_existing_webhook_to_the_decision_step(ctx: ToolContext) -> None:
    doc = _decision_doc(ctx, trigger={"type": "webhook"})
    ok(doc, "add_edges", {"edges": [{"source": "webhook", "target": "schedule-visit"}]}, ctx)
    assert [e.target_job for e in doc.structure.edges_from("webhook")] == ["schedule-visit"]
    edge_id = doc.structure.edges_from("webhook")[0].id

    ok(doc, "add_review_gate", RESUME, ctx)

    (edge,) = doc.structure.edges_from("webhook")
    assert (edge.target_job, edge.id) == ("read-coordinator-decision", edge_id)
    assert doc.structure.triggers["webhook"].custom_path == "intake-review"
    # Without on_corrected the corrected case goes where an approved one goes.
    assert doc.structure.find_edge("apply-coordinator-corrections", "schedule-visit") is not None


def test_resume_refuses_a_scheduled_workflow(ctx: ToolContext) -> None:
    doc = _decision_doc(ctx, trigger={"type": "cron", "cron_expression": "0 7 * * *"})
    fails(doc, "add_review_gate", RESUME, ctx, "review_resume_needs_webhook")


def test_resume_needs_both_outcomes_and_existing_steps(ctx: ToolContext) -> None:
    doc = _decision_doc(ctx, trigger=None)
    fails(doc, "add_review_gate", {**RESUME, "on_rejected": None}, ctx, "invalid_arguments")
    fails(doc, "add_review_gate", {**RESUME, "on_approved": "nope"}, ctx, "unknown_job")


# ------------------------------------------------------------------------ status transition

TRANSITION = {
    "after": "check-coverage",
    "subject": "referral",
    "status": "active",
    "otherwise": "on-hold",
    "checks": [{"name": "coverage is verified"}, {"name": "documents are attached"}],
}


def test_a_transition_branches_on_every_named_check_and_its_negation(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    ok(doc, "add_status_transition", TRANSITION, ctx)

    s = doc.structure
    checker = "check-referral-active-preconditions"
    body = _code_is_clean(doc, checker)
    assert '"coverage is verified": Boolean(state.data?.coverageVerified === true)' in body
    assert '"documents are attached": Boolean(state.data?.documentsAttached === true)' in body
    every = (
        "state.data.checks['coverage is verified'] && state.data.checks['documents are attached']"
    )
    advance = s.find_edge(checker, "set-referral-status-to-active")
    hold = s.find_edge(checker, "set-referral-status-to-on-hold")
    assert advance is not None and hold is not None
    assert unguarded(advance.condition_expression or "") == every
    assert unguarded(hold.condition_expression or "") == f"!({every})"
    assert "status: 'active'" in _code_is_clean(doc, "set-referral-status-to-active")
    assert "status: 'on-hold'" in _code_is_clean(doc, "set-referral-status-to-on-hold")
    assert s.find_edge("check-coverage", checker) is not None


def test_a_check_may_give_its_own_expression(ctx: ToolContext, doc: WorkflowDocument) -> None:
    check = {"name": "plan is not suspended", "expression": "state.data.plan !== 'SUSPENDED'"}
    ok(doc, "add_status_transition", {**TRANSITION, "checks": [check]}, ctx)
    body = doc.structure.jobs["check-referral-active-preconditions"].body or ""
    assert "Boolean(state.data.plan !== 'SUSPENDED')" in body


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"otherwise": "Active"}, "invalid_arguments"),
        ({"checks": []}, "invalid_arguments"),
        ({"checks": [{"name": "a"}, {"name": "A"}]}, "invalid_arguments"),
        ({"checks": [{"name": "x", "expression": "a; b"}]}, "invalid_condition_expression"),
        ({"after": "nope"}, "unknown_job"),
    ],
)
def test_transition_refusals(
    ctx: ToolContext, doc: WorkflowDocument, change: dict[str, Any], code: str
) -> None:
    fails(doc, "add_status_transition", {**TRANSITION, **change}, ctx, code)


# ------------------------------------------------------------------------------- rule table

ROWS = [
    {"when": "orthopedic", "requires": ["imaging"]},
    {"when": "cardiology", "requires": ["EKG report", "labs"]},
    {"when": "behavioral health", "requires": ["clinical summary"], "not_required": ["labs"]},
]


def test_a_rule_table_is_one_step_whose_code_holds_the_table(
    ctx: ToolContext, doc: WorkflowDocument
) -> None:
    before = set(doc.structure.edges)
    result = ok(
        doc,
        "add_rule_table",
        {"name": "Check required documents", "after": "check-coverage", "rows": ROWS},
        ctx,
    )
    body = _code_is_clean(doc, "check-required-documents")
    assert '"orthopedic": { required: ["imaging"] },' in body
    assert '"cardiology": { required: ["EKG report", "labs"] },' in body
    assert '"behavioral health": { required: ["clinical summary"], notRequired: ["labs"] },' in body
    assert "each(" not in body and body.count("fn(") == 1
    assert set(doc.structure.edges) - before == {"check-coverage->check-required-documents"}
    assert "cardiology: EKG report, labs" in result.message


def test_a_rule_table_over_a_list_uses_each(ctx: ToolContext) -> None:
    doc = build([("set_trigger", {"type": "webhook"})], ctx)
    ok(doc, "add_rule_table", {"name": "Check documents", "rows": ROWS, "items": "referrals"}, ctx)
    body = _code_is_clean(doc, "check-documents")
    assert "each('$.data.referrals[*]', fn(state => {" in body
    assert [e.target_job for e in doc.structure.edges_from("webhook")] == ["check-documents"]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"name": "Check documents", "rows": ROWS}, "missing_after"),
        ({"name": "Check", "after": "nope", "rows": ROWS}, "unknown_job"),
        ({"name": "Check", "after": "check-coverage", "rows": []}, "invalid_arguments"),
        (
            {"name": "Check", "after": "check-coverage", "rows": ROWS, "type_field": "a.b"},
            "invalid_arguments",
        ),
        (
            {"name": "Check", "after": "check-coverage", "rows": [ROWS[0], ROWS[0]]},
            "invalid_arguments",
        ),
    ],
)
def test_rule_table_refusals(
    ctx: ToolContext, doc: WorkflowDocument, args: dict[str, Any], code: str
) -> None:
    fails(doc, "add_rule_table", args, ctx, code)
