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

# A Lightning project.yaml with three workflows: every condition type (always,
# on_job_success, on_job_failure, js_expression with a label), a disabled edge, a
# credential, webhook and cron triggers; the second hands off to the third's webhook.
REFERRAL_PROJECT = """\
name: Referral programme
credentials: {}
workflows:
  referral-intake:
    name: Referral intake
    jobs:
      fetch-referral:
        name: Fetch referral
        adaptor: '@openfn/language-http@latest'
        credential: clinic-api
        body: |
          get('/referrals');
      check-coverage:
        name: Check coverage
        adaptor: '@openfn/language-http@latest'
        body: |
          post('/coverage', state => state.data);
      notify-team:
        name: Notify team
        adaptor: '@openfn/language-common@latest'
        body: fn(state => state)
    triggers:
      webhook:
        type: webhook
        enabled: true
    edges:
      webhook->fetch-referral:
        source_trigger: webhook
        target_job: fetch-referral
        condition_type: always
        enabled: true
      fetch-referral->check-coverage:
        source_job: fetch-referral
        target_job: check-coverage
        condition_type: on_job_success
        enabled: true
      fetch-referral->notify-team:
        source_job: fetch-referral
        target_job: notify-team
        condition_type: on_job_failure
        enabled: true
  document-verification:
    name: Document verification
    jobs:
      verify-documents:
        name: Verify documents
        adaptor: '@openfn/language-common@latest'
        body: 'fn(state => ({ ...state, verified: true }))'
      hand-off:
        name: Hand off
        adaptor: '@openfn/language-http@latest'
        body: |
          post('/i/status-transitions', state => state.data);
    triggers:
      cron:
        type: cron
        cron_expression: '0 7 * * *'
        enabled: false
    edges:
      cron->verify-documents:
        source_trigger: cron
        target_job: verify-documents
        condition_type: always
        enabled: true
      verify-documents->hand-off:
        source_job: verify-documents
        target_job: hand-off
        condition_type: js_expression
        condition_expression: '!state.errors && state.verified'
        condition_label: verified
        enabled: true
  status-transitions:
    name: Status transitions
    jobs:
      record-status:
        name: Record status
        adaptor: '@openfn/language-common@latest'
        body: fn(state => state)
      alert:
        name: Alert
        adaptor: '@openfn/language-common@latest'
        body: fn(state => state)
    triggers:
      webhook:
        type: webhook
        enabled: true
    edges:
      webhook->record-status:
        source_trigger: webhook
        target_job: record-status
        condition_type: always
        enabled: true
      record-status->alert:
        source_job: record-status
        target_job: alert
        condition_type: on_job_failure
        enabled: false
"""
