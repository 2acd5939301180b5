"""The offline model, end to end through the turn harness.

A table of plain-English requests (SOPs, edits, typos, ambiguous references,
questions, schedules, read-only sessions, things it cannot parse) -> the tool
calls it makes and the document that results. Then the properties: the same
conversation gives the same result, questions and read-only sessions never
change the document, ambiguity is a question, unparsed requests get the
capability answer, and generated code passes the job-code checks for every
adaptor in the catalogue.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agents.models.base import ModelRequest, RequestContext
from agents.models.offline import OfflineModel
from agents.models.offline.codegen import starter_code
from agents.models.offline.schedule import find_schedule
from tests.unit.offline_harness import run_turn
from tools.catalogue.adaptors import load_catalogue
from tools.catalogue.names import adaptor_short_name
from tools.document import WorkflowDocument
from tools.document.redaction import redact
from tools.jobcode import STANDARD_EMPTY_BODY, check_job_code
from tools.registry import MUTATING_TOOLS

# --------------------------------------------------------------------------- documents

REFERRAL_YAML = """\
name: Referral intake
jobs:
  get-referrals:
    id: 00000000-0000-4000-8000-000000000001
    name: Get referrals
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/referrals');
  check-coverage:
    id: 00000000-0000-4000-8000-000000000002
    name: Check coverage
    adaptor: '@openfn/language-fhir@latest'
    body: // Add operations here
  send-email:
    id: 00000000-0000-4000-8000-000000000003
    name: Send email
    adaptor: '@openfn/language-gmail@latest'
    body: // Add operations here
  send-sms:
    id: 00000000-0000-4000-8000-000000000004
    name: Send SMS
    adaptor: '@openfn/language-twilio@latest'
    body: // Add operations here
triggers:
  webhook:
    id: 00000000-0000-4000-8000-000000000005
    type: webhook
    enabled: false
edges:
  webhook->get-referrals:
    id: 00000000-0000-4000-8000-000000000006
    source_trigger: webhook
    target_job: get-referrals
    condition_type: always
    enabled: true
  get-referrals->check-coverage:
    id: 00000000-0000-4000-8000-000000000007
    source_job: get-referrals
    target_job: check-coverage
    condition_type: on_job_success
    enabled: true
  check-coverage->send-email:
    id: 00000000-0000-4000-8000-000000000008
    source_job: check-coverage
    target_job: send-email
    condition_type: on_job_success
    enabled: true
  check-coverage->send-sms:
    id: 00000000-0000-4000-8000-000000000009
    source_job: check-coverage
    target_job: send-sms
    condition_type: on_job_failure
    enabled: true
"""

CHAIN_YAML = """\
name: Patient sync
jobs:
  fetch-patients:
    id: 10000000-0000-4000-8000-000000000001
    name: Fetch patients
    adaptor: '@openfn/language-dhis2@latest'
    body: // Add operations here
  transform-data:
    id: 10000000-0000-4000-8000-000000000002
    name: Transform data
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  upsert-records:
    id: 10000000-0000-4000-8000-000000000003
    name: Upsert records
    adaptor: '@openfn/language-postgresql@latest'
    body: // Add operations here
triggers:
  cron:
    id: 10000000-0000-4000-8000-000000000004
    type: cron
    enabled: true
    cron_expression: 0 9 * * *
edges:
  cron->fetch-patients:
    id: 10000000-0000-4000-8000-000000000005
    source_trigger: cron
    target_job: fetch-patients
    condition_type: always
    enabled: true
  fetch-patients->transform-data:
    id: 10000000-0000-4000-8000-000000000006
    source_job: fetch-patients
    target_job: transform-data
    condition_type: on_job_success
    enabled: true
  transform-data->upsert-records:
    id: 10000000-0000-4000-8000-000000000007
    source_job: transform-data
    target_job: upsert-records
    condition_type: on_job_success
    enabled: true
"""

DOCS: dict[str, Callable[[], WorkflowDocument]] = {
    "referral": lambda: WorkflowDocument.from_yaml(REFERRAL_YAML),
    "chain": lambda: WorkflowDocument.from_yaml(CHAIN_YAML),
    "empty": lambda: WorkflowDocument.new("Referral intake"),
    "unnamed": lambda: WorkflowDocument.new(),
    "disconnected": lambda: WorkflowDocument.from_yaml(
        REFERRAL_YAML.replace(
            "  webhook->get-referrals:\n"
            "    id: 00000000-0000-4000-8000-000000000006\n"
            "    source_trigger: webhook\n"
            "    target_job: get-referrals\n"
            "    condition_type: always\n"
            "    enabled: true\n",
            "",
        )
    ),
}

SINGLE_YAML = """\
name: Lonely
jobs:
  fetch-patients:
    id: 20000000-0000-4000-8000-000000000001
    name: Fetch patients
    adaptor: '@openfn/language-dhis2@latest'
    body: // Add operations here
"""
DOCS["single"] = lambda: WorkflowDocument.from_yaml(SINGLE_YAML)

REFERRAL_JOBS = {
    "get-referrals": ("Get referrals", "http"),
    "check-coverage": ("Check coverage", "fhir"),
    "send-email": ("Send email", "gmail"),
    "send-sms": ("Send SMS", "twilio"),
}
REFERRAL_EDGES: dict[tuple[str, str], Any] = {
    ("webhook", "get-referrals"): "always",
    ("get-referrals", "check-coverage"): "on_job_success",
    ("check-coverage", "send-email"): "on_job_success",
    ("check-coverage", "send-sms"): "on_job_failure",
}
CHAIN_EDGES: dict[tuple[str, str], Any] = {
    ("cron", "fetch-patients"): "always",
    ("fetch-patients", "transform-data"): "on_job_success",
    ("transform-data", "upsert-records"): "on_job_success",
}
ASK_SEND = 'Which step do you mean by "send"'
CAN_DO = "ANTHROPIC_API_KEY"


def edges_with(base: dict[tuple[str, str], Any], **changes: Any) -> dict[tuple[str, str], Any]:
    """``base`` with edges added/changed (``a__b=value``) or removed (``a__b=None``)."""
    result = dict(base)
    for name, value in changes.items():
        pair = tuple(name.replace("_", "-").split("--"))
        assert len(pair) == 2
        if value is None:
            result.pop((pair[0], pair[1]), None)
        else:
            result[(pair[0], pair[1])] = value
    return result


def js(expression: str, label: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"condition_type": "js_expression", "condition_expression": expression}
    if label:
        value["condition_label"] = label
    return value


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    id: str
    doc: str
    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...] | None = None
    jobs: dict[str, tuple[str, str]] | None = None
    edges: dict[tuple[str, str], Any] | None = None
    trigger: tuple[str, str | None, bool] | None = None
    says: tuple[str, ...] = ()
    never_says: tuple[str, ...] = ()
    unchanged: bool = False
    options: dict[str, Any] = field(default_factory=dict)


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
                "state.data.plan === 'BlueCross HMO'", "BlueCross HMO"
            ),
            ("check-insurance", "verify-coverage-is-active"): js(
                "state.data.plan !== 'BlueCross HMO'", "not BlueCross HMO"
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
            "move-to-documents": ("Move to documents", "common"),
        },
        edges={
            ("webhook", "pull-up-referral-in-epic"): "always",
            ("pull-up-referral-in-epic", "check-insurance"): "on_job_success",
            ("check-insurance", "go-to-bluecross-portal"): js(
                "state.data.insurance === 'BlueCross' && state.data.planCode?.startsWith('HMO')",
                "BlueCross and plan code starts with HMO",
            ),
            ("go-to-bluecross-portal", "submit-prior-auth-request"): "on_job_success",
            ("check-insurance", "verify-coverage-is-active"): js(
                "!(state.data.insurance === 'BlueCross' && state.data.planCode?.startsWith('HMO'))",
                "otherwise",
            ),
            ("verify-coverage-is-active", "move-to-documents"): "on_job_success",
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
                "!state.data.eligible", "not eligible"
            ),
            ("check-eligibility", "save-referral-to-database"): js(
                "state.data.eligible", "eligible"
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
    # --- edges -----------------------------------------------------------------------------
    Case(
        "connect-on-failure",
        "referral",
        "connect get referrals to send sms on failure",
        calls=(
            (
                "add_edges",
                {
                    "edges": [
                        {
                            "source": "get-referrals",
                            "target": "send-sms",
                            "condition_type": "on_job_failure",
                        }
                    ]
                },
            ),
        ),
        edges=edges_with(REFERRAL_EDGES, get_referrals__send_sms="on_job_failure"),
    ),
    Case(
        "run-only-if-fails",
        "referral",
        "run send email only if get referrals fails",
        edges=edges_with(REFERRAL_EDGES, get_referrals__send_email="on_job_failure"),
    ),
    Case(
        "run-only-on-failure-changes-existing-edge",
        "referral",
        "only run send email on failure",
        calls=(
            (
                "update_edges",
                {"edges": [{"source": "check-coverage", "condition_type": "on_job_failure"}]},
            ),
        ),
        edges=edges_with(REFERRAL_EDGES, check_coverage__send_email="on_job_failure"),
    ),
    Case(
        "edge-always",
        "referral",
        "make the edge from check coverage to send sms always",
        edges=edges_with(REFERRAL_EDGES, check_coverage__send_sms="always"),
    ),
    Case(
        "edge-stated-condition",
        "referral",
        "run send email only when the plan is BlueCross HMO",
        edges=edges_with(
            REFERRAL_EDGES,
            check_coverage__send_email=js("state.data.plan === 'BlueCross HMO'", "BlueCross HMO"),
        ),
    ),
    Case(
        "connect-js-expression",
        "referral",
        "hook up get referrals with send sms when state.data.urgent",
        edges=edges_with(REFERRAL_EDGES, get_referrals__send_sms=js("state.data.urgent")),
    ),
    Case(
        "disable-edge",
        "referral",
        "disable the edge from check coverage to send email",
        edges=edges_with(
            REFERRAL_EDGES,
            check_coverage__send_email={"condition_type": "on_job_success", "enabled": False},
        ),
    ),
    Case(
        "connect-trigger-retargets",
        "referral",
        "connect the trigger to check coverage",
        calls=(
            (
                "update_edges",
                {"edges": [{"source": "webhook", "new_target": "check-coverage"}]},
            ),
        ),
        edges=edges_with(
            REFERRAL_EDGES, webhook__get_referrals=None, webhook__check_coverage="always"
        ),
    ),
    Case(
        "retarget-instead-of",
        "referral",
        "make get referrals go to send email instead of check coverage",
        calls=(
            (
                "update_edges",
                {"edges": [{"source": "get-referrals", "new_target": "send-email"}]},
            ),
        ),
        edges=edges_with(
            REFERRAL_EDGES,
            get_referrals__check_coverage=None,
            get_referrals__send_email="on_job_success",
        ),
    ),
    Case(
        "disconnect",
        "referral",
        "disconnect check coverage from send email",
        calls=(
            ("remove_edges", {"edges": [{"source": "check-coverage", "target": "send-email"}]}),
        ),
        edges=edges_with(REFERRAL_EDGES, check_coverage__send_email=None),
    ),
    Case(
        "remove-edge-between",
        "referral",
        "remove the connection between check coverage and send sms",
        edges=edges_with(REFERRAL_EDGES, check_coverage__send_sms=None),
    ),
    Case(
        "disconnect-not-connected-explains",
        "referral",
        "disconnect get referrals from send sms",
        calls=(),
        unchanged=True,
        says=("are not connected",),
    ),
    Case(
        "connect-existing-explains",
        "referral",
        "connect get referrals to check coverage",
        calls=(),
        unchanged=True,
        says=("already exists",),
    ),
    # --- triggers and schedules --------------------------------------------------------
    Case(
        "schedule-every-day-at-9",
        "referral",
        "run it every day at 9",
        calls=(("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"}),),
        trigger=("cron", "0 9 * * *", False),
        edges=edges_with(REFERRAL_EDGES, webhook__get_referrals=None, cron__get_referrals="always"),
    ),
    Case(
        "schedule-weekdays-at-730",
        "referral",
        "schedule it for weekdays at 7:30",
        trigger=("cron", "30 7 * * 1-5", False),
    ),
    Case(
        "schedule-every-15-minutes",
        "referral",
        "every 15 minutes",
        trigger=("cron", "*/15 * * * *", False),
    ),
    Case("schedule-hourly", "chain", "make it run hourly", trigger=("cron", "0 * * * *", True)),
    Case(
        "schedule-first-of-month",
        "chain",
        "change the schedule to on the first of the month at 6",
        trigger=("cron", "0 6 1 * *", True),
    ),
    Case(
        "schedule-every-monday",
        "chain",
        "run it every monday at 8am",
        trigger=("cron", "0 8 * * 1", True),
    ),
    Case(
        "schedule-and-enable",
        "referral",
        "change the trigger to every 2 hours and enable it",
        calls=(
            (
                "set_trigger",
                {"type": "cron", "cron_expression": "0 */2 * * *", "enabled": True},
            ),
        ),
        trigger=("cron", "0 */2 * * *", True),
    ),
    Case(
        "use-a-webhook",
        "chain",
        "use a webhook",
        calls=(("set_trigger", {"type": "webhook"}),),
        trigger=("webhook", None, True),
    ),
    Case(
        "enable-trigger",
        "referral",
        "enable the trigger",
        calls=(("set_trigger", {"type": "webhook", "enabled": True}),),
        trigger=("webhook", None, True),
    ),
    Case(
        "disable-schedule",
        "chain",
        "pause the schedule",
        trigger=("cron", "0 9 * * *", False),
    ),
    Case(
        "enable-already-enabled-explains",
        "chain",
        "turn on the trigger",
        calls=(),
        unchanged=True,
        says=("already enabled",),
    ),
    # --- code --------------------------------------------------------------------------
    Case(
        "code-via-planner",
        "referral",
        "write the code for check coverage to fetch the Coverage for the patient",
        calls=(
            ("call_job_code_agent", {"job_key": "check-coverage"}),
            ("edit_job_code", {"job_key": "check-coverage"}),
        ),
        says=("Check coverage", "get(...)"),
    ),
    Case(
        "code-direct-route-on-step-page",
        "referral",
        "write code that sends the result by email",
        options={"page": "job", "job_key": "send-email"},
        calls=(("edit_job_code", {"job_key": "send-email"}),),
    ),
    Case(
        "code-for-all-steps",
        "chain",
        "write code for all steps",
        # The graph runs the three code agents together, after the planner's round.
        calls=(
            ("call_job_code_agent", {"job_key": "fetch-patients"}),
            ("call_job_code_agent", {"job_key": "transform-data"}),
            ("call_job_code_agent", {"job_key": "upsert-records"}),
            ("edit_job_code", {"job_key": "fetch-patients"}),
            ("edit_job_code", {"job_key": "transform-data"}),
            ("edit_job_code", {"job_key": "upsert-records"}),
        ),
    ),
    Case(
        "code-existing-is-not-overwritten",
        "referral",
        "fix the code",
        options={"page": "job", "job_key": "get-referrals"},
        calls=(),
        unchanged=True,
        says=("already has code", "not changed"),
    ),
    # --- start over, several commands, follow-ups, errors ---------------------------------
    Case(
        "start-over",
        "referral",
        "start over",
        calls=(("remove_jobs", {"keys": list(REFERRAL_JOBS)}),),
        jobs={},
        edges={},
        says=("empty now",),
    ),
    Case(
        "start-over-and-build",
        "referral",
        "start over and create a workflow called Sync that fetches patients from dhis2 then "
        "upserts them to postgres every 15 minutes",
        calls=(("remove_jobs", {}), ("create_workflow", {"name": "Sync"})),
        jobs={
            "fetch-patients": ("Fetch patients", "dhis2"),
            "upsert-patients": ("Upsert patients", "postgresql"),
        },
        trigger=("cron", "*/15 * * * *", False),
    ),
    Case(
        "two-commands",
        "referral",
        "rename get referrals to Fetch referrals. Then add a step called Dedupe after Fetch "
        "referrals",
        calls=(
            ("update_jobs", {}),
            ("add_jobs", {}),
            ("update_edges", {}),
            ("add_edges", {}),
        ),
        jobs={
            **REFERRAL_JOBS,
            "get-referrals": ("Fetch referrals", "http"),
            "dedupe": ("Dedupe", "common"),
        },
    ),
    Case(
        "follow-up-picks-the-step",
        "referral",
        "the sms one",
        options={
            "history": [
                {"role": "user", "content": "remove send"},
                {
                    "role": "assistant",
                    "content": 'Which step do you mean by "send": "Send email" (send-email) or '
                    '"Send SMS" (send-sms)? Nothing was changed.',
                },
            ]
        },
        calls=(("remove_jobs", {"keys": ["send-sms"]}),),
    ),
    Case(
        "errors-mode-connects-trigger",
        "disconnected",
        "",
        options={"errors": "Trigger 'webhook' is not connected to a step yet."},
        calls=(("add_edges", {"edges": [{"source": "webhook", "target": "get-referrals"}]}),),
        edges=REFERRAL_EDGES,
    ),
    # --- questions (never change anything) -----------------------------------------------
    Case(
        "q-what-does-it-do",
        "referral",
        "what does this workflow do?",
        calls=(),
        unchanged=True,
        says=("4 step(s)", "Trigger: a webhook", "Send SMS", "on failure"),
    ),
    Case(
        "q-list-steps",
        "chain",
        "list the steps",
        calls=(),
        unchanged=True,
        says=("1. Fetch patients", "3. Upsert records"),
    ),
    Case(
        "q-after-with-typo",
        "referral",
        "what happens after get referals?",
        calls=(),
        unchanged=True,
        says=('After "Get referrals": "Check coverage" (on success)',),
    ),
    Case(
        "q-if-fails",
        "referral",
        "What happens if check coverage fails?",
        calls=(),
        unchanged=True,
        says=('"Send SMS" (on failure)',),
    ),
    Case(
        "q-if-fails-unhandled",
        "referral",
        "what if get referrals fails",
        calls=(),
        unchanged=True,
        says=("the run stops there",),
    ),
    Case(
        "q-which-use-http",
        "referral",
        "which steps use http?",
        calls=(),
        unchanged=True,
        says=('Steps using http: "Get referrals"',),
    ),
    Case(
        "q-which-have-code",
        "referral",
        "which steps have code?",
        calls=(),
        unchanged=True,
        says=('Steps with code: "Get referrals"',),
    ),
    Case(
        "q-what-triggers",
        "chain",
        "what triggers this?",
        calls=(),
        unchanged=True,
        says=("schedule (every day at 09:00), enabled",),
    ),
    Case(
        "q-before",
        "referral",
        "what runs before send email",
        calls=(),
        unchanged=True,
        says=('runs after "Check coverage"',),
    ),
    Case(
        "q-about-step",
        "referral",
        "tell me about check coverage",
        calls=(),
        unchanged=True,
        says=("uses fhir",),
    ),
    Case(
        "q-show-code",
        "referral",
        "show me the code of get referrals",
        calls=(("inspect_job_code", {"job_keys": ["get-referrals"]}),),
        unchanged=True,
        says=("get('/referrals')",),
    ),
    Case(
        "q-docs",
        "referral",
        "how do I send an sms with twilio?",
        calls=(("search_documentation", {}),),
        unchanged=True,
        says=("sendSMS",),
    ),
    Case(
        "q-adaptors",
        "empty",
        "what adaptors are available?",
        calls=(),
        unchanged=True,
        says=("dhis2", "salesforce"),
    ),
    Case(
        "q-ambiguous-asks",
        "referral",
        "what happens after send?",
        calls=(),
        unchanged=True,
        says=(ASK_SEND,),
    ),
    # --- read-only sessions ----------------------------------------------------------------
    Case(
        "ro-edit-refused",
        "referral",
        "remove check coverage",
        options={"read_only": True},
        calls=(),
        unchanged=True,
        says=("read-only",),
    ),
    Case(
        "ro-code-refused",
        "referral",
        "write the code for send email to email the coordinator",
        options={"read_only": True},
        calls=(),
        unchanged=True,
        says=("read-only",),
    ),
    Case(
        "ro-question-answered",
        "referral",
        "what happens if check coverage fails?",
        options={"read_only": True},
        calls=(),
        unchanged=True,
        says=("Send SMS",),
    ),
    Case(
        "ro-inspect-allowed",
        "referral",
        "show me the code for get referrals",
        options={"read_only": True},
        calls=(("inspect_job_code", {}),),
        unchanged=True,
    ),
    # --- things it cannot parse ------------------------------------------------------------
    Case(
        "unparsed-weather",
        "referral",
        "what's the weather like",
        calls=(),
        unchanged=True,
        says=(CAN_DO,),
    ),
    Case("unparsed-vague", "referral", "make it better", calls=(), unchanged=True, says=(CAN_DO,)),
    Case("unparsed-gibberish", "chain", "blorp zip zap", calls=(), unchanged=True, says=(CAN_DO,)),
    # --- review fixes: nothing unparsed is swallowed into a name (M4) -----------------------
    Case(
        "m4-rename-and-then-unparsed-refuses",
        "referral",
        "rename send sms to Text patient and then frobnicate the widget",
        calls=(),
        unchanged=True,
        says=('understand "frobnicate the widget"', "changed nothing", CAN_DO),
    ),
    Case(
        "m4-rename-comma-then-unparsed-refuses",
        "referral",
        "rename send sms to Text patient, then frobnicate the widget",
        calls=(),
        unchanged=True,
        says=('understand "frobnicate the widget"', CAN_DO),
    ),
    Case(
        "m4-rename-sentence-then-unparsed-refuses",
        "referral",
        "rename get referrals to Fetch referrals. Frobnicate the widget",
        calls=(),
        unchanged=True,
        says=('understand "Frobnicate the widget"', CAN_DO),
    ),
    Case(
        "m4-rename-but-qualifier-refuses",
        "referral",
        "rename send sms to Text patient but only on weekdays",
        calls=(),
        unchanged=True,
        says=('understand "but only on weekdays"', "quotes", CAN_DO),
    ),
    Case(
        "m4-rename-if-qualifier-refuses",
        "referral",
        "rename send sms to Text patient if it has no code",
        calls=(),
        unchanged=True,
        says=('understand "if it has no code"', CAN_DO),
    ),
    Case(
        "m4-rename-workflow-and-unparsed-refuses",
        "referral",
        "rename the workflow to Intake and frobnicate the widget",
        calls=(),
        unchanged=True,
        says=('understand "and frobnicate the widget"', CAN_DO),
    ),
    Case(
        "m4-rename-workflow-and-second-command",
        "chain",
        "rename the workflow to Intake and delete everything",
        calls=(("update_workflow", {"name": "Intake"}), ("remove_jobs", {})),
        jobs={},
        says=('Renamed the workflow to "Intake"', "empty now"),
    ),
    Case(
        "m4-rename-and-remove-both-run",
        "referral",
        "rename send sms to Text patient and remove send email",
        calls=(
            ("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]}),
            ("remove_jobs", {"keys": ["send-email"]}),
        ),
        jobs={
            k: v
            for k, v in {**REFERRAL_JOBS, "send-sms": ("Text patient", "twilio")}.items()
            if k != "send-email"
        },
    ),
    Case(
        "m4-rename-then-filler-is-not-a-command",
        "referral",
        "rename send sms to Text patient. That's it.",
        calls=(("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]}),),
        jobs={**REFERRAL_JOBS, "send-sms": ("Text patient", "twilio")},
    ),
    Case(
        "m4-rename-quoted-name-keeps-and",
        "referral",
        'rename send sms to "Checks and balances"',
        calls=(("update_jobs", {"jobs": [{"key": "send-sms", "name": "Checks and balances"}]}),),
        jobs={**REFERRAL_JOBS, "send-sms": ("Checks and balances", "twilio")},
    ),
    Case(
        "m4-rename-unquoted-name-with-and-asks-for-quotes",
        "referral",
        "rename send sms to Checks and balances",
        calls=(),
        unchanged=True,
        says=('understand "and balances"', "quotes"),
    ),
    Case(
        "m4-rename-key-stops-at-clause",
        "referral",
        "rename the key of send sms to text-patient and frobnicate the widget",
        calls=(),
        unchanged=True,
        says=('understand "and frobnicate the widget"',),
    ),
    # --- review fixes: existing code is not overwritten unless asked ------------------------
    Case(
        "code-all-steps-skips-steps-with-code",
        "referral",
        "write code for all steps",
        calls=(
            ("call_job_code_agent", {"job_key": "check-coverage"}),
            ("call_job_code_agent", {"job_key": "send-email"}),
            ("call_job_code_agent", {"job_key": "send-sms"}),
            ("edit_job_code", {"job_key": "check-coverage"}),
            ("edit_job_code", {"job_key": "send-email"}),
            ("edit_job_code", {"job_key": "send-sms"}),
        ),
        says=('Skipped "Get referrals"', "already has code", 'Wrote starter code for "Send SMS"'),
        never_says=("The code agent said", "lines of code for"),
    ),
    Case(
        "code-all-steps-rewrite-replaces-existing",
        "referral",
        "rewrite the code for all steps",
        calls=(
            *(("call_job_code_agent", {"job_key": key}) for key in REFERRAL_JOBS),
            *(("edit_job_code", {"job_key": key}) for key in REFERRAL_JOBS),
        ),
        never_says=("Skipped",),
    ),
    Case(
        "code-write-for-step-with-code-is-not-overwritten",
        "referral",
        "write the code for get referrals to fetch patients",
        calls=(("call_job_code_agent", {"job_key": "get-referrals"}),),
        unchanged=True,
        says=("already has code", "rewrite the code for Get referrals", "not changed"),
        never_says=("call_job_code_agent", "code_not_written", "failed:"),
    ),
    # --- review fixes: replies in plain words, from what the tools saved --------------------
    Case(
        "reply-reports-saved-workflow-name",
        "referral",
        "rename the workflow to Ünïcödé 🚀",
        calls=(("update_workflow", {}),),
        says=('Renamed the workflow to "Unicode"',),
        never_says=("Ünïcödé",),
    ),
    Case(
        "reply-reports-saved-step-name",
        "referral",
        "rename send sms to Ünïcödé",
        jobs={**REFERRAL_JOBS, "send-sms": ("Unicode", "twilio")},
        says=('"Unicode"',),
        never_says=("Ünïcödé",),
    ),
    Case(
        "reply-no-structure-block",
        "single",
        "remove fetch patients",
        calls=(("remove_jobs", {"keys": ["fetch-patients"]}),),
        jobs={},
        says=("Removed Fetch patients", "empty now", "postgres"),
        never_says=("The workflow now", "Workflow: Lonely"),
    ),
    Case(
        "reply-code-not-written-in-plain-words",
        "referral",
        "implement get referrals",
        calls=(("call_job_code_agent", {"job_key": "get-referrals"}),),
        unchanged=True,
        says=('"Get referrals" already has code',),
        never_says=("call_job_code_agent", "code_not_written", "No code was written for '"),
    ),
    Case(
        "reply-two-trigger-changes-two-bullets",
        "referral",
        "enable the trigger. run it every day at 9",
        calls=(
            ("set_trigger", {"enabled": True}),
            ("set_trigger", {"cron_expression": "0 9 * * *"}),
        ),
        trigger=("cron", "0 9 * * *", True),
        says=("- Enabled the trigger.", "- The trigger is now a schedule (every day at 09:00)"),
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
    Case(
        "condition-pronoun-with-nothing-to-mean-asks",
        "referral",
        "connect check coverage to send email when it is Tuesday",
        calls=(),
        unchanged=True,
        says=('what "it is Tuesday" should check', "state.data.<field>"),
        never_says=("state.data.result",),
    ),
    Case(
        "condition-pronoun-run-when-asks",
        "referral",
        "run send email only when it is Tuesday",
        calls=(),
        unchanged=True,
        says=('what "it is Tuesday" should check',),
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
    Case(
        "undo-explains-versions",
        "referral",
        "undo that",
        calls=(),
        unchanged=True,
        says=("revert",),
    ),
]


# --------------------------------------------------------------------------- checking


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(_subset(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(expected == actual)


def _jobs(doc: WorkflowDocument) -> dict[str, tuple[str, str]]:
    return {k: (j.name, adaptor_short_name(j.adaptor)) for k, j in doc.structure.jobs.items()}


def _edges(doc: WorkflowDocument) -> dict[tuple[str, str], dict[str, Any]]:
    result: dict[tuple[str, str], dict[str, Any]] = {}
    for edge in doc.structure.edges.values():
        value: dict[str, Any] = {"condition_type": edge.condition_type}
        if edge.condition_expression is not None:
            value["condition_expression"] = edge.condition_expression
        if edge.condition_label:
            value["condition_label"] = edge.condition_label
        if not edge.enabled:
            value["enabled"] = False
        result[(edge.source, edge.target_job)] = value
    return result


def _expected_edges(edges: dict[tuple[str, str], Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        pair: ({"condition_type": v} if isinstance(v, str) else dict(v))
        for pair, v in edges.items()
    }


def _trigger(doc: WorkflowDocument) -> tuple[str, str | None, bool] | None:
    triggers = list(doc.structure.triggers.values())
    assert len(triggers) <= 1
    if not triggers:
        return None
    t = triggers[0]
    return (t.type, t.cron_expression, t.enabled)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    doc = DOCS[case.doc]()
    before = doc.to_yaml()
    outcome = run_turn(doc, case.text, **case.options)
    names = [name for name, _ in outcome.tool_calls]
    if case.calls is not None:
        assert names == [name for name, _ in case.calls], outcome.final_text
        for (_, expected), (_, actual) in zip(case.calls, outcome.tool_calls, strict=True):
            assert _subset(expected, actual), (expected, actual)
    if case.unchanged:
        assert outcome.doc.to_yaml() == before
    if case.jobs is not None:
        assert _jobs(outcome.doc) == case.jobs
    if case.edges is not None:
        assert _edges(outcome.doc) == _expected_edges(case.edges)
    if case.trigger is not None:
        assert _trigger(outcome.doc) == case.trigger
    for fragment in case.says:
        assert fragment.lower() in outcome.final_text.lower(), outcome.final_text
    for fragment in case.never_says:
        assert fragment.lower() not in outcome.final_text.lower(), outcome.final_text
    assert outcome.final_text.strip()
    for name, args in outcome.tool_calls:
        if name == "edit_job_code":
            for edit in args["edits"]:
                assert check_job_code(edit["new_code"]) == []


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


# --------------------------------------------------------------------------- properties

CONVERSATION = [
    "create a workflow that gets referrals from http, checks coverage with fhir, then emails "
    "the coordinator with gmail, every weekday at 7",
    "add a dedupe step after get referrals",
    "add a step that texts the patient with twilio if check coverage fails",
    "rename email coordinator to Notify coordinator",
    "write the code for check coverage to fetch the Coverage",
    "enable the trigger",
    "what does this workflow do?",
]


def _converse(texts: list[str]) -> tuple[str, list[Any], list[str]]:
    doc = WorkflowDocument.new("Referral intake")
    calls: list[Any] = []
    answers: list[str] = []
    history: list[dict[str, str]] = []
    for text in texts:
        outcome = run_turn(doc, text, history=tuple(history))
        doc = outcome.doc
        calls.append(outcome.tool_calls)
        answers.append(outcome.final_text)
        history += [{"role": "user", "content": text}]
        history += [{"role": "assistant", "content": outcome.final_text}]
    return doc.to_yaml(), calls, answers


def test_same_conversation_same_result() -> None:
    first = _converse(CONVERSATION)
    second = _converse(CONVERSATION)
    assert first == second
    yaml_text, calls, _ = first
    assert "dedupe" in yaml_text and "text-patient" in yaml_text
    assert any(name == "edit_job_code" for name, _ in calls[4])


QUESTIONS = [
    "what does this workflow do",
    "describe this workflow",
    "list the steps",
    "how many steps are there?",
    "what happens after check coverage",
    "what happens if check coverage fails?",
    "what happens when get referrals succeeds",
    "which steps use fhir",
    "which steps have no code",
    "what triggers this",
    "when does it run?",
    "is the trigger enabled?",
    "tell me about send email",
    "what does get referrals do?",
    "what functions does http have",
    "what adaptors can I use",
    "what happens after send",
    "what happens after the billing step",
]


@pytest.mark.parametrize("doc_name", ["referral", "chain"])
def test_questions_never_mutate(doc_name: str) -> None:
    for text in QUESTIONS:
        doc = DOCS[doc_name]()
        before = doc.to_yaml()
        outcome = run_turn(doc, text)
        assert doc.to_yaml() == before, text
        assert not [n for n, _ in outcome.tool_calls if n in MUTATING_TOOLS], text
        assert outcome.final_text.strip(), text


def test_read_only_never_emits_mutating_tools() -> None:
    for case in CASES:
        doc = DOCS[case.doc]()
        before = doc.to_yaml()
        options = {k: v for k, v in case.options.items() if k != "read_only"}
        outcome = run_turn(doc, case.text, read_only=True, **options)
        mutating = [n for n, _ in outcome.tool_calls if n in MUTATING_TOOLS or n == "edit_job_code"]
        assert mutating == [], (case.id, mutating)
        assert doc.to_yaml() == before, case.id


AMBIGUOUS = [
    "remove send",
    "rename send to Notify",
    "add a step called Archive after send",
    "connect check coverage to send on failure",
    "change send to use http",
    "move send after get referrals",
    "write the code for send to post the data",
]


@pytest.mark.parametrize("text", AMBIGUOUS)
def test_ambiguous_reference_is_a_question(text: str) -> None:
    doc = DOCS["referral"]()
    before = doc.to_yaml()
    outcome = run_turn(doc, text)
    assert outcome.tool_calls == []
    assert doc.to_yaml() == before
    assert ASK_SEND in outcome.final_text
    assert "send-email" in outcome.final_text and "send-sms" in outcome.final_text


UNPARSED = [
    "what's the weather like",
    "make it better",
    "optimise everything for performance",
    "please do the needful",
    "sing me a song",
    "🙂",
]


@pytest.mark.parametrize("text", UNPARSED)
def test_unparsed_gets_capability_answer(text: str) -> None:
    doc = DOCS["referral"]()
    before = doc.to_yaml()
    outcome = run_turn(doc, text)
    assert outcome.tool_calls == []
    assert doc.to_yaml() == before
    assert CAN_DO in outcome.final_text
    assert "rename A to B" in outcome.final_text


REQUESTS = [
    "fetch the patients from /api/patients",
    "send the results to the registry",
    "transform the data for the next step",
    "fetch referrals and post them to https://example.org/api/referrals",
    "",
]


@pytest.mark.parametrize("adaptor", sorted(load_catalogue().adaptors))
def test_generated_code_passes_checks_for_every_adaptor(adaptor: str) -> None:
    entry = load_catalogue().adaptors[adaptor]
    functions = [{"name": f.name, "params": list(f.params)} for f in entry.functions]
    job = {"key": "step", "name": "Sync records", "adaptor": f"{adaptor}@latest"}
    for request in REQUESTS:
        code = starter_code(job, functions, request)
        assert check_job_code(code) == [], (adaptor, request, code)
        assert "minimal placeholder" not in code, (adaptor, request)


# --------------------------------------------------------------------------- model level


def _ask(request: ModelRequest) -> Any:
    return asyncio.run(OfflineModel().create(request))


def _route(text: str, *, page: str = "job", job_key: str | None = "check-coverage") -> Any:
    doc = DOCS["referral"]()
    response = _ask(
        ModelRequest(
            role="router",
            system="",
            messages=[{"role": "user", "content": text}],
            context=RequestContext(
                user_text=text,
                structure=redact(doc.structure),
                page="job" if page == "job" else "workflow",
                job_key=job_key,
            ),
        )
    )
    (use,) = response.tool_uses
    assert use["name"] == "route"
    return use["input"]


@pytest.mark.parametrize(
    ("text", "page", "job_key", "destination"),
    [
        ("write code that fetches the coverage", "job", "check-coverage", "job_code"),
        ("make it fetch the Coverage resource", "job", "check-coverage", "job_code"),
        ("write the code for check coverage to get coverage", "job", "check-coverage", "job_code"),
        ("write the code for send email to email someone", "job", "check-coverage", "planner"),
        ("write code that fetches the coverage", "workflow", None, "planner"),
        ("rename this step to Verify", "job", "check-coverage", "planner"),
        ("what does this step do", "job", "check-coverage", "planner"),
        ("write code for all steps", "job", "check-coverage", "planner"),
    ],
)
def test_router_rules(text: str, page: str, job_key: str | None, destination: str) -> None:
    route = _route(text, page=page, job_key=job_key)
    assert route["destination"] == destination
    assert 1 <= route["confidence"] <= 5
    if destination == "job_code":
        assert route["job_key"] == job_key


def test_router_without_structure_still_routes_the_viewed_step() -> None:
    response = _ask(
        ModelRequest(
            role="router",
            system="",
            messages=[{"role": "user", "content": "write code that fetches the coverage"}],
            context=RequestContext(
                user_text="write code that fetches the coverage", page="job", job_key="x"
            ),
        )
    )
    assert response.tool_uses[0]["input"]["destination"] == "job_code"


def _code_request(messages: list[dict[str, Any]], body: str = STANDARD_EMPTY_BODY) -> Any:
    return _ask(
        ModelRequest(
            role="job_code",
            system="",
            messages=messages,
            context=RequestContext(
                user_text="send the referral to the registry",
                page="job",
                job_key="post-referral",
                job={
                    "key": "post-referral",
                    "name": "Post referral",
                    "adaptor": "@openfn/language-http@latest",
                    "body": body,
                },
                adaptor_functions=[
                    {"name": f.name, "params": list(f.params), "description": f.description}
                    for f in load_catalogue().adaptors["@openfn/language-http"].functions
                ],
            ),
        )
    )


def test_code_agent_falls_back_to_minimal_code_after_an_error() -> None:
    first = _code_request([{"role": "user", "content": "send the referral"}])
    (use,) = first.tool_uses
    assert use["name"] == "edit_job_code"
    code = use["input"]["edits"][0]["new_code"]
    assert "post(" in code and check_job_code(code) == []
    error = {"type": "tool_result", "tool_use_id": use["id"], "content": "boom", "is_error": True}
    messages = [
        {"role": "user", "content": "send the referral"},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [error]},
    ]
    second = _code_request(messages)
    (fallback,) = second.tool_uses
    fallback_code = fallback["input"]["edits"][0]["new_code"]
    assert "fn(state => state);" in fallback_code and check_job_code(fallback_code) == []
    again = {**error, "tool_use_id": fallback["id"]}
    third = _code_request(
        [
            *messages,
            {"role": "assistant", "content": second.content},
            {"role": "user", "content": [again]},
        ]
    )
    assert third.tool_uses == [] and "left as it was" in third.text


def test_planner_explains_a_tool_error_from_the_results() -> None:
    doc = DOCS["referral"]()
    use = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "remove_jobs",
        "input": {"keys": ["check-coverage"]},
    }
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "Error (declined): the user declined. The workflow was not changed.",
        "is_error": True,
    }
    response = _ask(
        ModelRequest(
            role="planner",
            system="",
            messages=[
                {"role": "user", "content": "remove check coverage"},
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ],
            context=RequestContext(
                user_text="remove check coverage", structure=redact(doc.structure)
            ),
        )
    )
    assert response.stop_reason == "end_turn"
    assert "declined" in response.text and "Nothing was changed" in response.text


@pytest.mark.parametrize(
    ("phrase", "cron"),
    [
        ("every day at 9", "0 9 * * *"),
        ("weekdays at 7:30", "30 7 * * 1-5"),
        ("every 15 minutes", "*/15 * * * *"),
        ("hourly", "0 * * * *"),
        ("on the first of the month", "0 0 1 * *"),
        ("every monday at 8am", "0 8 * * 1"),
        ("every weekday at 7", "0 7 * * 1-5"),
        ("mondays and thursdays at 5:15 pm", "15 17 * * 1,4"),
        ("every night at 11", "0 23 * * *"),
        ("at noon every day", "0 12 * * *"),
        ("on weekends at 10", "0 10 * * 0,6"),
        ("cron 5 4 * * 0", "5 4 * * 0"),
    ],
)
def test_schedule_phrases(phrase: str, cron: str) -> None:
    schedule = find_schedule(phrase)
    assert schedule is not None and schedule.cron == cron
