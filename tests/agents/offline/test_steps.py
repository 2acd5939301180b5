"""The offline model through the turn harness.

Adding, inserting, renaming, re-adapting, removing and moving steps.
"""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import steps as steps_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import (
    ASK_SEND,
    CHAIN_EDGES,
    REFERRAL_EDGES,
    REFERRAL_JOBS,
    edges_with,
)

CASES = [
    # --- adding and inserting steps ------------------------------------------------------
    Case(
        "add-after-single-successor",
        "referral",
        "add a dedupe step after get referrals",
        calls=(
            ("add_jobs", {"jobs": [{"name": "Dedupe", "adaptor": "common"}]}),
            (
                "update_edges",
                {"edges": [{"source": "get-referrals", "new_target": "dedupe"}]},
            ),
            ("add_edges", {"edges": [{"source": "dedupe", "target": "check-coverage"}]}),
        ),
        jobs={**REFERRAL_JOBS, "dedupe": ("Dedupe", "common")},
        edges=edges_with(
            REFERRAL_EDGES,
            get_referrals__check_coverage=None,
            get_referrals__dedupe="on_job_success",
            dedupe__check_coverage="on_job_success",
        ),
    ),
    Case(
        "add-quoted-before",
        "referral",
        "Please add a step called 'Dedupe referrals' before check coverage",
        edges=edges_with(
            REFERRAL_EDGES,
            get_referrals__check_coverage=None,
            get_referrals__dedupe_referrals="on_job_success",
            dedupe_referrals__check_coverage="on_job_success",
        ),
    ),
    Case(
        "insert-between",
        "chain",
        "insert Validate patients between fetch patients and transform data",
        jobs={
            "fetch-patients": ("Fetch patients", "dhis2"),
            "transform-data": ("Transform data", "common"),
            "upsert-records": ("Upsert records", "postgresql"),
            "validate-patients": ("Validate patients", "common"),
        },
        edges=edges_with(
            CHAIN_EDGES,
            fetch_patients__transform_data=None,
            fetch_patients__validate_patients="on_job_success",
            validate_patients__transform_data="on_job_success",
        ),
    ),
    Case(
        "add-adaptor-first-at-the-start",
        "chain",
        "add an http step called Ping monitor at the start",
        calls=(
            ("add_jobs", {"jobs": [{"name": "Ping monitor", "adaptor": "http"}]}),
            ("update_edges", {"edges": [{"source": "cron", "new_target": "ping-monitor"}]}),
            ("add_edges", {"edges": [{"source": "ping-monitor", "target": "fetch-patients"}]}),
        ),
        edges=edges_with(
            CHAIN_EDGES,
            cron__fetch_patients=None,
            cron__ping_monitor="always",
            ping_monitor__fetch_patients="on_job_success",
        ),
    ),
    Case(
        "add-step-to-do-something-with-adaptor",
        "chain",
        "insert a step to send an SMS with twilio after upsert records",
        calls=(
            ("add_jobs", {"jobs": [{"name": "Send SMS", "adaptor": "twilio"}]}),
            ("add_edges", {"edges": [{"source": "upsert-records", "target": "send-sms"}]}),
        ),
        edges=edges_with(CHAIN_EDGES, upsert_records__send_sms="on_job_success"),
    ),
    Case(
        "add-failure-branch",
        "referral",
        "add a step that texts the patient with twilio if check coverage fails",
        jobs={**REFERRAL_JOBS, "text-patient": ("Text patient", "twilio")},
        edges=edges_with(REFERRAL_EDGES, check_coverage__text_patient="on_job_failure"),
    ),
    Case(
        "add-failure-branch-hyphenated-name",
        "referral",
        "add a step that emails the on-call engineer with gmail if check coverage fails",
        jobs={**REFERRAL_JOBS, "email-on-call-engineer": ("Email on-call engineer", "gmail")},
        edges=edges_with(REFERRAL_EDGES, check_coverage__email_on_call_engineer="on_job_failure"),
    ),
    Case(
        "add-branch-on-failure-suffix",
        "chain",
        "add an alert step with gmail after fetch patients on failure",
        jobs=None,
        edges=edges_with(CHAIN_EDGES, fetch_patients__alert="on_job_failure"),
    ),
    Case(
        "add-at-end-with-two-last-steps-asks",
        "referral",
        "add a Log results step at the end",
        calls=(),
        unchanged=True,
        says=("several last steps",),
    ),
    Case(
        "add-at-end-of-chain",
        "chain",
        "append a step called Notify admin using gmail",
        edges=edges_with(CHAIN_EDGES, upsert_records__notify_admin="on_job_success"),
    ),
    Case(
        "add-without-a-name-asks",
        "referral",
        "add a step after check coverage",
        calls=(),
        unchanged=True,
        says=("What should the new step be called",),
    ),
    Case(
        "add-duplicate-name-explains",
        "referral",
        "add a step called Check coverage after send email",
        calls=(),
        unchanged=True,
        says=("I can't do that", "check-coverage"),
    ),
    # --- rename / adaptor / remove / move ------------------------------------------------
    Case(
        "rename-quoted",
        "referral",
        "rename 'Send SMS' to 'Text patient'",
        calls=(("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]}),),
        jobs={**REFERRAL_JOBS, "send-sms": ("Text patient", "twilio")},
        edges=REFERRAL_EDGES,
    ),
    Case(
        "rename-with-typo",
        "referral",
        "rename chek coverge to Verify insurance",
        calls=(("update_jobs", {"jobs": [{"key": "check-coverage", "name": "Verify insurance"}]}),),
    ),
    Case(
        "rename-workflow",
        "referral",
        "Rename the workflow to Intake v2",
        calls=(("update_workflow", {"name": "Intake v2"}),),
    ),
    Case(
        "change-adaptor",
        "referral",
        "switch send email to msgraph",
        calls=(("update_jobs", {"jobs": [{"key": "send-email", "adaptor": "msgraph"}]}),),
        jobs={**REFERRAL_JOBS, "send-email": ("Send email", "msgraph")},
    ),
    Case(
        "change-adaptor-use-for",
        "referral",
        "use salesforce for get referrals",
        jobs={**REFERRAL_JOBS, "get-referrals": ("Get referrals", "salesforce")},
    ),
    Case(
        "change-adaptor-unknown",
        "referral",
        "change get referrals to use the foo adaptor",
        calls=(),
        unchanged=True,
        says=('adaptor called "foo"',),
    ),
    Case(
        "change-to-is-ambiguous",
        "referral",
        "change check coverage to verify insurance",
        calls=(),
        unchanged=True,
        says=("Do you want to rename",),
    ),
    Case(
        "remove-middle-step-rewires",
        "chain",
        "remove transform data",
        calls=(
            ("remove_jobs", {"keys": ["transform-data"]}),
            ("add_edges", {"edges": [{"source": "fetch-patients", "target": "upsert-records"}]}),
        ),
        jobs={
            "fetch-patients": ("Fetch patients", "dhis2"),
            "upsert-records": ("Upsert records", "postgresql"),
        },
        edges={
            ("cron", "fetch-patients"): "always",
            ("fetch-patients", "upsert-records"): "on_job_success",
        },
    ),
    Case(
        "remove-two",
        "referral",
        "get rid of send sms and send email",
        calls=(("remove_jobs", {"keys": ["send-sms", "send-email"]}),),
        jobs={k: v for k, v in REFERRAL_JOBS.items() if k in ("get-referrals", "check-coverage")},
    ),
    Case(
        "remove-with-typo",
        "referral",
        "delete the chek coverage step",
        calls=(("remove_jobs", {"keys": ["check-coverage"]}),),
    ),
    Case(
        "remove-ambiguous-asks",
        "referral",
        "remove send",
        calls=(),
        unchanged=True,
        says=(ASK_SEND, "send-email", "send-sms"),
    ),
    Case(
        "remove-unknown-explains",
        "referral",
        "remove the billing step",
        calls=(),
        unchanged=True,
        says=('no step called "billing"', "Get referrals"),
    ),
    Case(
        "move-before",
        "chain",
        "move upsert records before transform data",
        edges={
            ("cron", "fetch-patients"): "always",
            ("fetch-patients", "upsert-records"): "on_job_success",
            ("upsert-records", "transform-data"): "on_job_success",
        },
    ),
    Case(
        "move-to-the-end",
        "chain",
        "move fetch patients to the end",
        edges={
            ("cron", "transform-data"): "always",
            ("transform-data", "upsert-records"): "on_job_success",
            ("upsert-records", "fetch-patients"): "on_job_success",
        },
    ),
    Case(
        "remove-vague-reference-asks-which",
        "referral",
        "remove the step",
        calls=(),
        unchanged=True,
        says=('Which step do you mean by "the step"', "(send-sms)", "(get-referrals)"),
        never_says=('no step called "the"',),
    ),
    Case(
        "remove-vague-reference-follow-up",
        "referral",
        "Send SMS",
        options={
            "history": [
                {"role": "user", "content": "remove the step"},
                {
                    "role": "assistant",
                    "content": 'Which step do you mean by "the step": "Get referrals" '
                    '(get-referrals), "Check coverage" (check-coverage), "Send email" '
                    '(send-email) or "Send SMS" (send-sms)? Nothing was changed.',
                },
            ]
        },
        calls=(("remove_jobs", {"keys": ["send-sms"]}),),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(steps_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)
