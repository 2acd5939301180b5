"""Sample workflows the offline-model tests (and the rules' examples) run on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tools.document import WorkflowDocument

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


# Spelled out, not imported: the exact guard OpenFn's runtime needs (its own on_job_success).
SUCCESS_GUARD = "!state.errors?.[upstreamStepId]"


def ok_and(check: str) -> str:
    """The expression of a branch that means "on success and <check>"."""
    return f"{SUCCESS_GUARD} && ({check})"


def js(expression: str, label: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"condition_type": "js_expression", "condition_expression": expression}
    if label:
        value["condition_label"] = label
    return value


# A decision with two arms that meet again (the shape of Linda's coverage check, seed 000).
BRANCHING_YAML = """\
name: Coverage check
jobs:
  check-insurance:
    id: 30000000-0000-4000-8000-000000000001
    name: Check insurance
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  submit-prior-auth-request:
    id: 30000000-0000-4000-8000-000000000002
    name: Submit prior-auth request
    adaptor: '@openfn/language-http@latest'
    body: // Add operations here
  verify-coverage-is-active:
    id: 30000000-0000-4000-8000-000000000003
    name: Verify coverage is active
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  attach-clinical-docs:
    id: 30000000-0000-4000-8000-000000000004
    name: Attach clinical docs
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->check-insurance:
    id: 30000000-0000-4000-8000-000000000011
    source_trigger: webhook
    target_job: check-insurance
    condition_type: always
    enabled: true
  check-insurance->submit-prior-auth-request:
    id: 30000000-0000-4000-8000-000000000012
    source_job: check-insurance
    target_job: submit-prior-auth-request
    condition_type: js_expression
    condition_expression: >-
      !state.errors?.[upstreamStepId] && (state.data.insurance === 'BlueCross')
    condition_label: BlueCross
    enabled: true
  check-insurance->verify-coverage-is-active:
    id: 30000000-0000-4000-8000-000000000013
    source_job: check-insurance
    target_job: verify-coverage-is-active
    condition_type: js_expression
    condition_expression: >-
      !state.errors?.[upstreamStepId] && (state.data.insurance !== 'BlueCross')
    condition_label: not BlueCross
    enabled: true
  submit-prior-auth-request->attach-clinical-docs:
    id: 30000000-0000-4000-8000-000000000014
    source_job: submit-prior-auth-request
    target_job: attach-clinical-docs
    condition_type: on_job_success
    enabled: true
  verify-coverage-is-active->attach-clinical-docs:
    id: 30000000-0000-4000-8000-000000000015
    source_job: verify-coverage-is-active
    target_job: attach-clinical-docs
    condition_type: on_job_success
    enabled: true
"""
DOCS["branching"] = lambda: WorkflowDocument.from_yaml(BRANCHING_YAML)

# The workflow Linda's paragraph builds (seed 000, test_build's build-expert-paragraph): the
# BlueCross arm reaches prior auth through the portal step, so a rule that adds prior auth
# for another kind of referral is a new arm from the decision, not a wider one.
LINDA_YAML = """\
name: Referral intake
jobs:
  pull-up-referral-in-epic:
    id: 40000000-0000-4000-8000-000000000001
    name: Pull up referral in Epic
    adaptor: '@openfn/language-fhir@latest'
    body: // Add operations here
  check-insurance:
    id: 40000000-0000-4000-8000-000000000002
    name: Check insurance
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  go-to-bluecross-portal:
    id: 40000000-0000-4000-8000-000000000003
    name: Go to BlueCross portal
    adaptor: '@openfn/language-http@latest'
    body: // Add operations here
  submit-prior-auth-request:
    id: 40000000-0000-4000-8000-000000000004
    name: Submit prior-auth request
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  verify-coverage-is-active:
    id: 40000000-0000-4000-8000-000000000005
    name: Verify coverage is active
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
  attach-clinical-docs:
    id: 40000000-0000-4000-8000-000000000006
    name: Attach clinical docs
    adaptor: '@openfn/language-common@latest'
    body: // Add operations here
triggers:
  webhook:
    id: 40000000-0000-4000-8000-000000000007
    type: webhook
    enabled: false
edges:
  pull-up-referral-in-epic->check-insurance:
    id: 40000000-0000-4000-8000-000000000008
    source_job: pull-up-referral-in-epic
    target_job: check-insurance
    condition_type: on_job_success
    enabled: true
  check-insurance->go-to-bluecross-portal:
    id: 40000000-0000-4000-8000-000000000009
    source_job: check-insurance
    target_job: go-to-bluecross-portal
    condition_type: js_expression
    condition_expression: >-
      !state.errors?.[upstreamStepId] && (state.data.insurance === 'BlueCross' &&
      state.data.planCode?.startsWith('HMO'))
    condition_label: BlueCross and plan code starts with HMO
    enabled: true
  go-to-bluecross-portal->submit-prior-auth-request:
    id: 40000000-0000-4000-8000-000000000010
    source_job: go-to-bluecross-portal
    target_job: submit-prior-auth-request
    condition_type: on_job_success
    enabled: true
  check-insurance->verify-coverage-is-active:
    id: 40000000-0000-4000-8000-000000000011
    source_job: check-insurance
    target_job: verify-coverage-is-active
    condition_type: js_expression
    condition_expression: >-
      !state.errors?.[upstreamStepId] && (!(state.data.insurance === 'BlueCross' &&
      state.data.planCode?.startsWith('HMO')))
    condition_label: otherwise
    enabled: true
  submit-prior-auth-request->attach-clinical-docs:
    id: 40000000-0000-4000-8000-000000000012
    source_job: submit-prior-auth-request
    target_job: attach-clinical-docs
    condition_type: on_job_success
    enabled: true
  verify-coverage-is-active->attach-clinical-docs:
    id: 40000000-0000-4000-8000-000000000013
    source_job: verify-coverage-is-active
    target_job: attach-clinical-docs
    condition_type: on_job_success
    enabled: true
  webhook->pull-up-referral-in-epic:
    id: 40000000-0000-4000-8000-000000000014
    source_trigger: webhook
    target_job: pull-up-referral-in-epic
    condition_type: always
    enabled: true
"""
DOCS["linda"] = lambda: WorkflowDocument.from_yaml(LINDA_YAML)
