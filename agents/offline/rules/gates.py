"""Review gates, escalations, status preconditions and per-type rule tables, tried on the
whole message before building (see :mod:`agents.offline.gates` and
:mod:`agents.offline.status_rules`)."""

from __future__ import annotations

import re

from agents.offline import gates, status_rules
from agents.offline.plan import Outcome
from agents.offline.rules.base import Example, Rule, Turn


def _review(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return gates.review(text, turn.view, turn.resolver)


def _escalate(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return gates.escalate(text, turn.view, turn.resolver)


def _transition(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return status_rules.transition(text, turn.view, turn.resolver)


def _table(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return status_rules.rule_table(text, turn.view, turn.resolver)


RULES = [
    Rule(
        "review_gate",
        "steps",
        "message",
        _review,
        (),
        (
            Example(
                "send the referral to the coordinator for sign-off after upsert records",
                "`add_review_gate` (raise): a step posting the case to the review queue "
                "(language-http, credential `review-queue`); the decision comes back on the "
                "webhook `<workflow>-<reviewer>-review`",
                ("add_review_gate",),
                also=(
                    "have the coordinator review the batch after upsert records",
                    "the referral must be approved by a supervisor",
                ),
                doc="chain",
                says=("review queue",),
                menu="send the referral to the coordinator for review",
            ),
            Example(
                "a coordinator reviews the referral before sending the email",
                "a review *before* a step: that step would wait in a workflow of its own (an "
                "OpenFn run cannot pause), so it changes nothing and says so (plan mode builds "
                "both workflows)",
                also=(
                    "the referral must be approved by a supervisor before send email",
                    "send it to the manager for sign-off before send email",
                ),
                says=("changed nothing", "Send email"),
            ),
            Example(
                "no supervisor needs to approve the batch",
                "a review it is not asked for (negated, hedged: a review step runs every "
                "time, several reviewers, more after the subject) changes nothing and says "
                "what it understood",
                doc="chain",
                also=(
                    "the supervisor may optionally review the batch",
                    "the nurse and the doctor both approve the results",
                    "the data manager reviews the batch and then emails the clinic",
                ),
                says=("changed nothing",),
            ),
            Example(
                "remove the review by the supervisor",
                "`remove_jobs` on that reviewer's one review step (credential "
                "`review-queue`), as `remove <step>`; none or several: it says so",
                ("remove_jobs",),
                doc="gated",
                also=("get rid of the supervisor's approval",),
            ),
        ),
    ),
    Rule(
        "escalation",
        "steps",
        "message",
        _escalate,
        (),
        (
            Example(
                "if check coverage fails, escalate to the supervisor",
                "`add_review_gate` (raise) on an on-failure edge from Check coverage",
                ("add_review_gate",),
                also=("escalate it to the billing team when check coverage fails",),
                says=("Check coverage",),
                menu="if X fails, escalate to the supervisor",
            ),
            Example(
                "escalate the referral to the supervisor when the coverage is not active",
                "`add_review_gate` (raise) behind the condition and the success guard, beside "
                "the step's other edges",
                ("add_review_gate",),
                says=("Check coverage",),
            ),
        ),
    ),
    Rule(
        "status_transition",
        "steps",
        "message",
        _transition,
        (),
        (
            Example(
                "advance the record to active only when the patient is verified and the "
                "consent is signed, otherwise on-hold",
                "`add_status_transition`: a step computing each named check into "
                "`state.data.checks`, then `!state.errors?.[upstreamStepId] && (checks…)` to "
                '"Set record status to active" and its negation to "… on-hold"',
                ("add_status_transition",),
                doc="chain",
                also=(
                    "don't move the record to active unless the patient is verified and the "
                    "consent is signed; otherwise put it on hold",
                    "mark the record as approved unless it is flagged, else pending",
                ),
                menu="advance X to active only when A and B, otherwise on-hold",
            ),
            Example(
                "advance the record to active only when the patient is verified",
                "asks what status it gets otherwise, and changes nothing",
                doc="chain",
                says=("changed nothing", "otherwise"),
            ),
        ),
    ),
    Rule(
        "rule_table",
        "steps",
        "message",
        _table,
        (),
        (
            Example(
                "Orthopedic needs imaging; cardiology needs an EKG report and labs; "
                "behavioral health a clinical summary, no labs",
                "`add_rule_table`: one step whose code holds the table as a JS object "
                "(type → required documents) and lists what is missing",
                ("set_trigger", "add_rule_table"),
                doc="empty",
                also=(
                    "Orthopedic referrals need recent imaging. Cardiology needs an EKG report "
                    "and recent labs. Behavioral health needs a clinical summary but not labs.",
                ),
                menu="orthopedic needs imaging; cardiology needs labs",
            ),
            Example(
                "for each referral in the batch: orthopedic requires imaging; cardiology "
                "requires an EKG report and labs",
                "the same, per item of `state.data.referrals` with language-common's `each`",
                ("add_rule_table",),
                doc="chain",
            ),
        ),
    ),
]
