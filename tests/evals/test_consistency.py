"""Reading claims out of replies and checking them against the real diff."""

from __future__ import annotations

import pytest

from evals.graders.consistency import Diff, check_claims, job_diff
from tests.evals.helpers import REFERRAL, edited
from tools.document import WorkflowDocument

ADDED = Diff(added=["Dedupe referrals", "dedupe-referrals"], changed=True)
REMOVED = Diff(removed=["Send SMS", "send-sms"], changed=True)
RENAMED = Diff(renamed=[("Send SMS send-sms", "Text patient send-sms")], changed=True)
NOTHING = Diff(changed=False)


@pytest.mark.parametrize(
    ("reply", "diff"),
    [
        ('Added the step "Dedupe referrals" (common).', ADDED),
        ("I've added a new step called Dedupe referrals after Get referrals.", ADDED),
        ("Removed Send SMS (send-sms).", REMOVED),
        ('Deleted the step "Send SMS" and its edge.', REMOVED),
        ('Renamed step send-sms to "Text patient".', RENAMED),
        ("I renamed Send SMS to Text patient.", RENAMED),
        ("Which step do you mean? Nothing was changed.", NOTHING),
        ("I could not add that step: no such adaptor. Nothing was changed.", NOTHING),
        ("Added an edge from A to B.", Diff(changed=True)),  # edges are not step claims
        (
            'Created the workflow "Lab results" with 3 steps.',
            Diff(changed=True, workflow_name="Lab results"),
        ),
    ],
)
def test_true_claims_pass(reply: str, diff: Diff) -> None:
    problems, _ = check_claims(reply, diff)
    assert problems == []


@pytest.mark.parametrize(
    ("reply", "diff", "fragment"),
    [
        ('Added the step "Validate referrals".', ADDED, "Validate referrals"),
        ('Added the steps "Dedupe referrals" and "Notify team".', ADDED, "Notify team"),
        ('Removed "Send email".', REMOVED, "Send email"),
        ('Renamed "Send SMS" to "Notify patient".', RENAMED, "Notify patient"),
        ("Done! Nothing was changed.", REMOVED, "nothing changed"),
        ('Added the step "Dedupe referrals".', NOTHING, "Dedupe referrals"),
        ('Renamed the workflow to "Intake v2".', NOTHING, "workflow"),
    ],
)
def test_false_claims_fail(reply: str, diff: Diff, fragment: str) -> None:
    problems, claims = check_claims(reply, diff)
    assert claims >= 1
    assert any(fragment in p for p in problems), problems


def test_job_diff_sees_additions_removals_and_renames() -> None:
    before = WorkflowDocument.from_yaml(REFERRAL).structure
    after_yaml = edited(
        REFERRAL,
        ("remove_jobs", {"keys": ["send-sms"]}),
        ("update_jobs", {"jobs": [{"key": "send-email", "name": "Email coordinator"}]}),
        ("add_jobs", {"jobs": [{"name": "Dedupe", "adaptor": "common"}]}),
    )
    diff = job_diff(before, WorkflowDocument.from_yaml(after_yaml).structure, changed=True)
    assert "Dedupe" in diff.added and "Send SMS" in diff.removed
    assert diff.renamed == [("Send email send-email", "Email coordinator send-email")]
