"""An expert's follow-up correction, in several phrasings (issue 23): exactly one guarded
branch or one rule changes, the rest of the workflow stays byte-identical, and the reply
names the edge; what cannot be placed asks and changes nothing."""

from __future__ import annotations

import difflib

import pytest

from tests.agents.offline.documents import DOCS, ok_and
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument


def _removed(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line.startswith("-") and not line.startswith("---")]


@pytest.mark.parametrize(
    ("doc", "text", "source", "target", "check"),
    [
        (
            "referral",
            "That's right, except when the coverage check returns `active` but there's a "
            "`copay-exception` extension, you need to flag it for manual review.",
            "check-coverage",
            "flag-for-manual-review",
            "state.data.status === 'active' && Boolean(state.data.copayException)",
        ),
        (
            "referral",
            "except when the coverage check comes back inactive, text the patient with twilio",
            "check-coverage",
            "text-patient",
            "state.data.status === 'inactive'",
        ),
        (
            "referral",
            "Please also email the supervisor after get referrals when the amount is over 500",
            "get-referrals",
            "email-supervisor",
            "state.data.amount > 500",
        ),
        (
            "referral",
            "when the coverage comes back expired but there is a grace-period flag, also text "
            "the patient with twilio",
            "check-coverage",
            "text-patient",
            "state.data.status === 'expired' && Boolean(state.data.gracePeriod)",
        ),
        (
            "referral",
            "also run send sms after get referrals when the plan code starts with PPO-",
            "get-referrals",
            "send-sms",
            "state.data.planCode?.startsWith('PPO-')",
        ),
        (
            "branching",
            "Now any ortho referral with a plan code starting with `PPO-` also needs prior auth, "
            "not just the BlueCross plans.",
            "check-insurance",
            "submit-prior-auth-request",
            None,  # widens the existing BlueCross edge (below)
        ),
        (
            "branching",
            "any cardiology referral with a copay exception also needs the verify coverage step",
            "check-insurance",
            "verify-coverage-is-active",
            None,
        ),
    ],
)
def test_one_guarded_branch_or_rule_and_nothing_else(
    doc: str, text: str, source: str, target: str, check: str | None
) -> None:
    start = DOCS[doc]()
    before = start.to_yaml()
    outcome = run_turn(start, text)
    after = outcome.doc.to_yaml()
    edge = outcome.doc.structure.edges[f"{source}->{target}"]
    assert edge.condition_type == "js_expression"
    assert edge.condition_expression is not None
    assert edge.condition_expression.startswith("!state.errors?.[upstreamStepId] && (")
    if check is not None:
        assert edge.condition_expression == ok_and(check)
        assert _removed(before, after) == []  # only added lines
    else:
        # An existing arm widened: only that edge's condition and label change.
        old, new = WorkflowDocument.from_yaml(before).structure, outcome.doc.structure
        assert new.jobs == old.jobs and set(new.edges) == set(old.edges)
        changed = [k for k in old.edges if old.edges[k] != new.edges[k]]
        assert changed == [f"{source}->{target}"]
        was = old.edges[changed[0]]
        assert (edge.id, edge.enabled) == (was.id, was.enabled)
        assert " || (" in edge.condition_expression
    assert f"{source}->{target}" in outcome.final_text
    assert "every other step and edge is unchanged" in outcome.final_text


@pytest.mark.parametrize(
    ("doc", "text", "says"),
    [
        (
            "branching",
            "Oh, Aetna changed this in March. Now any ortho referral with a plan code starting "
            "with `PPO-` also needs prior auth, not just the HMO plans.",
            "Aetna changed this in March",
        ),
        (
            "referral",
            "Looks good, but if the amount is over 500, email the supervisor",
            "which step",
        ),
        (
            "referral",
            "any ortho referral with a plan code starting with PPO- also needs a second opinion",
            "no step of the workflow",
        ),
        (
            "referral",
            "Referrals with a plan code starting with PPO- also need check coverage",
            "not from which step",
        ),
        (
            "referral",
            "also run Send email after check coverage when the status is urgent",
            "already",
        ),
        (  # a request beside the rule is not a story around it: nothing is half done
            "branching",
            "Rename the workflow to Intake v2. Now any ortho referral with a plan code "
            "starting with PPO- also needs prior auth.",
            "didn't understand",
        ),
    ],
)
def test_what_cannot_be_placed_asks_and_changes_nothing(doc: str, text: str, says: str) -> None:
    start = DOCS[doc]()
    before = start.to_yaml()
    outcome = run_turn(start, text)
    assert outcome.tool_calls == []
    assert outcome.doc.to_yaml() == before
    assert says in outcome.final_text
    assert "changed nothing" in outcome.final_text or "Nothing was changed" in outcome.final_text
