"""The offline model on review gates, escalations, status preconditions and rule tables,
in phrasings beyond the rule examples; anything ambiguous asks and changes nothing."""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import gates as gate_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)

_ESCALATE_FAILURE = {"part": "raise", "after": "check-coverage", "on_failure": True}

CASES = [
    # --- reviews at the end of the run: the gate's raise part --------------------------------
    *(
        Case(
            f"review-end-{i}",
            "chain",
            text,
            calls=(("add_review_gate", {"part": "raise", "after": "upsert-records", **who}),),
            says=("review queue",),
        )
        for i, (text, who) in enumerate(
            [
                (
                    "send the batch to the data manager for approval after upsert records",
                    {"reviewer": "data manager", "subject": "batch"},
                ),
                ("a pharmacist must review the order", {"reviewer": "pharmacist"}),
                (
                    "The records should be signed off by the clinic lead.",
                    {"reviewer": "clinic lead", "subject": "records"},
                ),
                ("let the supervisor look over the batch", {"reviewer": "supervisor"}),
                (
                    "route it to the QA team for sign-off",
                    {"reviewer": "qa team", "subject": "case"},
                ),
                ("the nurse approves the results after upsert records", {"reviewer": "nurse"}),
                (
                    "the records need sign-off from the data manager",
                    {"reviewer": "data manager", "subject": "records"},
                ),
                (
                    "get the supervisor's approval after upsert records",
                    {"reviewer": "supervisor", "subject": "case"},
                ),
                (
                    "once the records are upserted, the manager approves them",
                    {"reviewer": "manager", "subject": "case"},
                ),
            ]
        )
    ),
    Case(
        "review-path",
        "chain",
        "send the batch to the manager for review",
        calls=(("add_review_gate", {"resume_path": "patient-sync-manager-review"}),),
    ),
    # --- reviews before a step: two workflows, so nothing changes -----------------------------
    *(
        Case(f"review-before-{i}", "chain", text, calls=(), unchanged=True, says=says)
        for i, (text, says) in enumerate(
            [
                (
                    "a coordinator reviews the patients before they are transformed",
                    ("changed nothing", "Transform data", "workflow of its own"),
                ),
                (
                    "the data must be approved by a supervisor before upserting the records",
                    ("changed nothing", "Upsert records", 'after "Transform data"'),
                ),
                (
                    "Before the patients are transformed, a coordinator reviews the patients.",
                    ("changed nothing", "Transform data"),
                ),
                (
                    "a coordinator reviews the batch before transforming it",
                    ("changed nothing", "Transform data"),
                ),
                (
                    "have the clinic lead sign off on the batch after fetch patients",
                    ("changed nothing", "Transform data"),
                ),
            ]
        )
    ),
    # --- a person's review in the middle of a build: refused, nothing built ------------------
    *(
        Case(
            f"build-person-step-{i}",
            "empty",
            text,
            calls=(),
            unchanged=True,
            says=("changed nothing", "cannot wait for a person"),
        )
        for i, text in enumerate(
            [
                "First I pull up the referral in Epic. A coordinator reviews the referral "
                "before scheduling. Then I schedule the appointment.",
                "create a workflow called Intake:\n1. Fetch the referral over http\n2. The "
                "supervisor approves the referral\n3. Book the appointment",
                "create a workflow called Intake:\n1. Fetch the referral over http\n2. If the "
                "plan is HMO, escalate to the supervisor\n3. Book the appointment",
                "create a workflow called Claims:\n1. Fetch the claim over http\n2. Get the "
                "manager's approval\n3. Pay the claim with salesforce",
            ]
        )
    ),
    Case(
        "build-person-step-at-the-end",
        "empty",
        "create a workflow called Claims:\n1. Fetch the claim over http\n2. If the amount is "
        "over 5000, escalate to the supervisor by email\n3. Otherwise pay the claim with "
        "salesforce",
        calls=(("create_workflow", {}),),
    ),
    # --- escalations ---------------------------------------------------------------------------
    *(
        Case(
            f"escalate-failure-{i}",
            "referral",
            text,
            calls=(("add_review_gate", _ESCALATE_FAILURE),),
            says=("Check coverage",),
        )
        for i, text in enumerate(
            [
                "when check coverage fails, escalate it to the intake coordinator",
                "If the coverage check errors, then escalate to the supervisor.",
                "escalate to the billing team if check coverage fails",
            ]
        )
    ),
    Case(
        "escalate-condition",
        "referral",
        "if the plan is BlueCross HMO, escalate the referral to the prior-auth team after get "
        "referrals",
        calls=(
            (
                "add_review_gate",
                {"after": "get-referrals", "when": "state.data.plan === 'BlueCross HMO'"},
            ),
        ),
    ),
    Case(
        "escalate-no-step-asks",
        "referral",
        "if the plan is BlueCross HMO, escalate the referral to the prior-auth team",
        calls=(),
        unchanged=True,
        says=("which step", "changed nothing"),
    ),
    Case(
        "escalate-no-when",
        "referral",
        "escalate to the supervisor",
        calls=(),
        unchanged=True,
        says=("changed nothing", "when"),
    ),
    Case(
        "escalate-unknown-step",
        "referral",
        "escalate to the supervisor when the lab import fails",
        calls=(),
        unchanged=True,
        says=("no step called",),
    ),
    # --- status preconditions ------------------------------------------------------------------
    Case(
        "transition-source-words",
        "chain",
        "The workflow won't advance a referral to `active` unless coverage is verified and "
        "required documents are attached, otherwise on-hold",
        calls=(
            (
                "add_status_transition",
                {
                    "after": "upsert-records",
                    "subject": "referral",
                    "status": "active",
                    "otherwise": "on-hold",
                    "checks": [
                        {"name": "coverage is verified"},
                        {"name": "documents are attached"},
                    ],
                },
            ),
        ),
    ),
    Case(
        "transition-only-if",
        "chain",
        "only move the claim to approved if the amount is checked, the member is eligible and "
        "the form is signed; else pending",
        calls=(
            (
                "add_status_transition",
                {
                    "subject": "claim",
                    "status": "approved",
                    "otherwise": "pending",
                    "checks": [
                        {"name": "amount is checked"},
                        {"name": "member is eligible"},
                        {"name": "form is signed"},
                    ],
                },
            ),
        ),
    ),
    Case(
        "transition-unless-negates",
        "chain",
        "set the order to shipped unless it is on backorder, otherwise waiting",
        calls=(
            (
                "add_status_transition",
                {
                    "checks": [
                        {
                            "name": "not on backorder",
                            "expression": "state.data?.onBackorder !== true",
                        }
                    ]
                },
            ),
        ),
    ),
    Case(
        "transition-subject-first",
        "chain",
        "the record should only go to active when consent is signed, otherwise pending",
        calls=(
            (
                "add_status_transition",
                {"subject": "record", "status": "active", "otherwise": "pending"},
            ),
        ),
    ),
    Case(
        "transition-it-is",
        "chain",
        "move the record to closed only if it is reviewed, otherwise open",
        calls=(("add_status_transition", {"checks": [{"name": "reviewed"}]}),),
    ),
    Case(
        "transition-after",
        "chain",
        "advance the patient to enrolled only when consent is recorded, otherwise put it on "
        "hold after transform data",
        calls=(("add_status_transition", {"after": "transform-data", "otherwise": "on-hold"}),),
    ),
    *(
        Case(f"transition-asks-{i}", "chain", text, calls=(), unchanged=True, says=says)
        for i, (text, says) in enumerate(
            [
                (
                    "advance the referral to active when coverage is verified or the doctor "
                    "overrides it, otherwise on-hold",
                    ("changed nothing", "or"),
                ),
                (
                    "don't move the referral to active when documents are missing, else on-hold",
                    ("changed nothing",),
                ),
                (
                    "advance the referral to active only when coverage is verified, otherwise "
                    "active",
                    ("changed nothing", "same status"),
                ),
            ]
        )
    ),
    Case(
        "transition-two-leaves-asks",
        "referral",
        "advance the referral to active only when coverage is verified, otherwise on-hold",
        calls=(),
        unchanged=True,
        says=("which step", "Send email"),
    ),
    # --- rule tables -----------------------------------------------------------------------------
    Case(
        "table-maria-rows",
        "chain",
        "Orthopedic referrals need recent imaging. Cardiology needs an EKG report and recent "
        "labs. Behavioral health needs a clinical summary but not labs.",
        calls=(
            (
                "add_rule_table",
                {
                    "name": "Check requirements by type",
                    "after": "upsert-records",
                    "rows": [
                        {"when": "orthopedic", "requires": ["imaging"]},
                        {"when": "cardiology", "requires": ["EKG report", "labs"]},
                        {
                            "when": "behavioral health",
                            "requires": ["clinical summary"],
                            "not_required": ["labs"],
                        },
                    ],
                },
            ),
        ),
        says=("Check requirements by type", "cardiology: EKG report, labs"),
    ),
    Case(
        "table-documents-named",
        "referral",
        "after send email: orthopedic documents needed are x-rays; orthopedic... ",
        calls=(),
        unchanged=True,
    ),
    Case(
        "table-after-lead",
        "referral",
        "after send email: orthopedic requires imaging documents; cardiology requires labs",
        calls=(
            (
                "add_rule_table",
                {"name": "Check required documents", "after": "send-email"},
            ),
        ),
    ),
    Case(
        "table-two-leaves-asks",
        "referral",
        "orthopedic requires imaging; cardiology requires labs",
        calls=(),
        unchanged=True,
        says=("several steps", "Send SMS", "changed nothing"),
    ),
    Case(
        "table-other-domain",
        "chain",
        "Inpatients require a wristband and an allergy check\nOutpatients: an ID card\n"
        "Emergency cases need triage notes, no ID card",
        calls=(
            (
                "add_rule_table",
                {
                    "name": "Check requirements by type",
                    "rows": [
                        {"when": "inpatients", "requires": ["wristband", "allergy check"]},
                        {"when": "outpatients", "requires": ["ID card"]},
                        {
                            "when": "emergency",
                            "requires": ["triage notes"],
                            "not_required": ["ID card"],
                        },
                    ],
                },
            ),
        ),
    ),
    Case(
        "table-each",
        "chain",
        "For every order in the batch, wholesale orders need a tax ID; retail orders need a "
        "receipt",
        calls=(("add_rule_table", {"items": "orders"}),),
        says=("state.data.orders",),
    ),
    *(
        Case(f"table-not-a-table-{i}", "empty", text, calls=(), unchanged=True)
        for i, text in enumerate(
            [
                # A single row is a requirement, not a table; prose around rows is not placed.
                "Orthopedic needs imaging",
                "Maria knows the rules. Orthopedic needs imaging; cardiology needs labs.",
            ]
        )
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.calls], ids=lambda c: c.id)
def test_read_only_sessions_never_change_anything(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(gate_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)
