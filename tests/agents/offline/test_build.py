"""The offline model through the turn harness.

Building a workflow from a description, a list or an SOP in prose.
"""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import messages as build_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import (
    js,
    ok_and,
)

RULES = [r for r in build_rules.RULES if r.section == "build"]

CASES = [
    # --- building from a description or an SOP -----------------------------------------
    Case(
        "build-sentence",
        "empty",
        "create a workflow that gets referrals from http, checks coverage with fhir, then "
        "emails the coordinator with gmail, every weekday at 7",
        calls=(("create_workflow", {"name": "Referral intake"}),),
        jobs={
            "get-referrals": ("Get referrals", "http"),
            "check-coverage": ("Check coverage", "fhir"),
            "email-coordinator": ("Email coordinator", "gmail"),
        },
        edges={
            ("cron", "get-referrals"): "always",
            ("get-referrals", "check-coverage"): "on_job_success",
            ("check-coverage", "email-coordinator"): "on_job_success",
        },
        trigger=("cron", "0 7 * * 1-5", False),
        says=("Created the workflow", "weekdays at 07:00"),
    ),
    Case(
        "build-numbered-sop-with-stated-condition",
        "unnamed",
        "Create a workflow called Referral intake:\n"
        "1. Pull the referral from Epic\n"
        "2. Check the insurance\n"
        "3. If the plan is BlueCross HMO, submit a prior-auth request through the payer portal\n"
        "4. Otherwise verify the coverage is active\n"
        "5. Attach the clinical documents",
        calls=(("create_workflow", {"name": "Referral intake"}),),
        jobs={
            "pull-referral-from-epic": ("Pull referral from Epic", "fhir"),
            "check-insurance": ("Check insurance", "common"),
            "submit-prior-auth-request-through-payer-portal": (
                "Submit prior-auth request through payer portal",
                "http",
            ),
            "verify-coverage-is-active": ("Verify coverage is active", "common"),
            "attach-clinical-documents": ("Attach clinical documents", "common"),
        },
        edges={
            ("webhook", "pull-referral-from-epic"): "always",
            ("pull-referral-from-epic", "check-insurance"): "on_job_success",
            ("check-insurance", "submit-prior-auth-request-through-payer-portal"): js(
                ok_and("state.data.plan === 'BlueCross HMO'"), "BlueCross HMO"
            ),
            ("check-insurance", "verify-coverage-is-active"): js(
                ok_and("state.data.plan !== 'BlueCross HMO'"), "not BlueCross HMO"
            ),
            (
                "submit-prior-auth-request-through-payer-portal",
                "attach-clinical-documents",
            ): "on_job_success",
            ("verify-coverage-is-active", "attach-clinical-documents"): "on_job_success",
        },
        trigger=("webhook", None, False),
    ),
    Case(
        "build-expert-paragraph",
        "empty",
        "First I pull up the referral in Epic and check the insurance. If it's BlueCross and "
        "the plan code starts with HMO, I have to go to the BlueCross portal and submit a "
        "prior-auth request before I can attach the clinical docs. For everything else, I just "
        "verify the coverage is active and move to documents.",
        calls=(("create_workflow", {}),),
        jobs={
            "pull-up-referral-in-epic": ("Pull up referral in Epic", "fhir"),
            "check-insurance": ("Check insurance", "common"),
            "go-to-bluecross-portal": ("Go to BlueCross portal", "http"),
            "submit-prior-auth-request": ("Submit prior-auth request", "common"),
            "verify-coverage-is-active": ("Verify coverage is active", "common"),
            # "before I can attach the clinical docs" is the step the arms meet at, and
            # "move to documents" hands over to it (it is not a step of its own).
            "attach-clinical-docs": ("Attach clinical docs", "common"),
        },
        edges={
            ("webhook", "pull-up-referral-in-epic"): "always",
            ("pull-up-referral-in-epic", "check-insurance"): "on_job_success",
            ("check-insurance", "go-to-bluecross-portal"): js(
                ok_and(
                    "state.data.insurance === 'BlueCross' && state.data.planCode?.startsWith('HMO')"
                ),
                "BlueCross and plan code starts with HMO",
            ),
            ("go-to-bluecross-portal", "submit-prior-auth-request"): "on_job_success",
            ("check-insurance", "verify-coverage-is-active"): js(
                ok_and(
                    "!(state.data.insurance === 'BlueCross' && "
                    "state.data.planCode?.startsWith('HMO'))"
                ),
                "otherwise",
            ),
            ("submit-prior-auth-request", "attach-clinical-docs"): "on_job_success",
            ("verify-coverage-is-active", "attach-clinical-docs"): "on_job_success",
        },
    ),
    Case(
        "build-bulleted-with-flag-condition",
        "empty",
        "Here's our process:\n"
        "- Pull new referrals from the referral API\n"
        "- Look up the patient in Epic\n"
        "- Check eligibility\n"
        "- If the patient is not eligible, notify the coordinator by email\n"
        "- Save the referral to the database",
        jobs={
            "pull-new-referrals-from-referral-api": (
                "Pull new referrals from referral API",
                "http",
            ),
            "look-up-patient-in-epic": ("Look up patient in Epic", "fhir"),
            "check-eligibility": ("Check eligibility", "common"),
            "notify-coordinator-by-email": ("Notify coordinator by email", "gmail"),
            "save-referral-to-database": ("Save referral to database", "postgresql"),
        },
        edges={
            ("webhook", "pull-new-referrals-from-referral-api"): "always",
            ("pull-new-referrals-from-referral-api", "look-up-patient-in-epic"): "on_job_success",
            ("look-up-patient-in-epic", "check-eligibility"): "on_job_success",
            ("check-eligibility", "notify-coordinator-by-email"): js(
                ok_and("!state.data.eligible"), "not eligible"
            ),
            ("check-eligibility", "save-referral-to-database"): js(
                ok_and("state.data.eligible"), "eligible"
            ),
            ("notify-coordinator-by-email", "save-referral-to-database"): "on_job_success",
        },
    ),
    Case(
        "build-first-then-finally-with-schedule-sentence",
        "empty",
        "First fetch submissions from kobo, then transform them, and finally upload them to "
        "DHIS2. Run this every day at 6am.",
        jobs={
            "fetch-submissions": ("Fetch submissions", "kobotoolbox"),
            "transform-submissions": ("Transform submissions", "common"),
            "upload-submissions": ("Upload submissions", "dhis2"),
        },
        edges={
            ("cron", "fetch-submissions"): "always",
            ("fetch-submissions", "transform-submissions"): "on_job_success",
            ("transform-submissions", "upload-submissions"): "on_job_success",
        },
        trigger=("cron", "0 6 * * *", False),
    ),
    Case(
        "build-webhook-failure-branch-otherwise",
        "empty",
        "build a pipeline named Lab results: when a lab result arrives, parse it, if it fails "
        "alert the lab team via sms, otherwise store it in postgres",
        calls=(("create_workflow", {"name": "Lab results", "trigger": {"type": "webhook"}}),),
        jobs={
            "parse-lab-result": ("Parse lab result", "common"),
            "alert-lab-team": ("Alert lab team", "twilio"),
            "store-lab-result": ("Store lab result", "postgresql"),
        },
        edges={
            ("webhook", "parse-lab-result"): "always",
            ("parse-lab-result", "alert-lab-team"): "on_job_failure",
            ("parse-lab-result", "store-lab-result"): "on_job_success",
        },
    ),
    Case(
        "build-one-step-every-15-minutes",
        "unnamed",
        "create a workflow that fetches patients from dhis2 every 15 minutes",
        calls=(("create_workflow", {"name": "New workflow"}),),
        jobs={"fetch-patients": ("Fetch patients", "dhis2")},
        edges={("cron", "fetch-patients"): "always"},
        trigger=("cron", "*/15 * * * *", False),
        says=("rename the workflow",),
    ),
    Case(
        "build-named-nightly-sheet-to-salesforce",
        "empty",
        "set up a new workflow named Nightly sync that pulls rows from the google sheet and "
        "then upserts them to salesforce every night at 11pm",
        calls=(("create_workflow", {"name": "Nightly sync"}),),
        jobs={
            "pull-rows": ("Pull rows", "googlesheets"),
            "upsert-rows": ("Upsert rows", "salesforce"),
        },
        trigger=("cron", "0 23 * * *", False),
    ),
    Case(
        "build-numbered-with-failure-line",
        "empty",
        "1) Get orders from the shop API\n2) Save them in mysql\n3) If that fails, email the "
        "ops team\n4) Send a confirmation sms",
        jobs={
            "get-orders-from-shop-api": ("Get orders from shop API", "http"),
            "save-orders": ("Save orders", "mysql"),
            "email-ops-team": ("Email ops team", "gmail"),
            "send-confirmation-sms": ("Send confirmation sms", "twilio"),
        },
        edges={
            ("webhook", "get-orders-from-shop-api"): "always",
            ("get-orders-from-shop-api", "save-orders"): "on_job_success",
            ("save-orders", "email-ops-team"): "on_job_failure",
            ("save-orders", "send-confirmation-sms"): "on_job_success",
        },
    ),
    Case(
        "build-refused-on-non-empty-workflow",
        "referral",
        "create a workflow that fetches patients from dhis2",
        calls=(),
        unchanged=True,
        says=("already has 4 steps", "start over"),
    ),
    Case(
        "build-without-steps-asks",
        "empty",
        "create a workflow",
        calls=(),
        unchanged=True,
        says=("What steps should the workflow have",),
    ),
    # --- review fixes: a bare SOP that opens with an arrival builds on an empty workflow ---
    Case(
        "build-bare-arrival-sop",
        "empty",
        "when a lab result arrives, parse it, if it fails alert the lab team via sms, "
        "otherwise store it in postgres",
        calls=(("create_workflow", {"name": "Referral intake", "trigger": {"type": "webhook"}}),),
        jobs={
            "parse-lab-result": ("Parse lab result", "common"),
            "alert-lab-team": ("Alert lab team", "twilio"),
            "store-lab-result": ("Store lab result", "postgresql"),
        },
        edges={
            ("webhook", "parse-lab-result"): "always",
            ("parse-lab-result", "alert-lab-team"): "on_job_failure",
            ("parse-lab-result", "store-lab-result"): "on_job_success",
        },
    ),
    Case(
        "build-bare-arrival-sop-on-existing-workflow-explains",
        "referral",
        "when a lab result arrives, parse it, then store it in postgres",
        calls=(),
        unchanged=True,
        says=("already has 4 steps", "start over"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(
    ("rule", "example", "text"),
    example_params(RULES),
)
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)
