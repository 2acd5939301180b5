"""Sample workflow documents shared by the agent, service and integration suites."""

from __future__ import annotations

# Two steps, code in the first, one success edge, no trigger.
REFERRAL_DOC = """\
name: Referral intake
jobs:
  fetch:
    id: 00000000-0000-4000-8000-000000000001
    name: Fetch referral
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/referrals');
  check:
    id: 00000000-0000-4000-8000-000000000002
    name: Check coverage
    adaptor: '@openfn/language-fhir@latest'
    body: // Add operations here
edges:
  fetch->check:
    id: 00000000-0000-4000-8000-000000000005
    source_job: fetch
    target_job: check
    condition_type: on_job_success
    enabled: true
"""

# The same two steps behind a disabled webhook trigger that starts the first one.
_WEBHOOK = """\
triggers:
  webhook:
    id: 00000000-0000-4000-8000-000000000003
    type: webhook
    enabled: false
edges:
  webhook->fetch:
    id: 00000000-0000-4000-8000-000000000004
    source_trigger: webhook
    target_job: fetch
    condition_type: always
    enabled: true
"""
REFERRAL_WITH_WEBHOOK = REFERRAL_DOC.replace("edges:\n", _WEBHOOK, 1)

# Code in two steps and a failure edge (the web page imports it; the client draws it).
CODED_REFERRAL_DOC = """\
name: Referral intake
jobs:
  fetch:
    name: Fetch referral
    adaptor: '@openfn/language-http@latest'
    body: |
      get('/referrals');
  check:
    name: Check coverage
    adaptor: '@openfn/language-fhir@latest'
    body: |
      // Look up the patient's coverage
      get('Coverage', { query: { patient: $.patientId } });
  alert:
    name: Alert staff
    adaptor: '@openfn/language-gmail@latest'
    body: // Add operations here
triggers:
  webhook:
    type: webhook
    enabled: false
edges:
  webhook->fetch:
    source_trigger: webhook
    target_job: fetch
    condition_type: always
    enabled: true
  fetch->check:
    source_job: fetch
    target_job: check
    condition_type: on_job_success
    enabled: true
  check->alert:
    source_job: check
    target_job: alert
    condition_type: on_job_failure
    enabled: true
"""
