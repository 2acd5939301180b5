"""Sample workflow documents shared by the agent, service and integration suites; the text
of each is a file in tests/fixtures/."""

from __future__ import annotations

from tests.fixtures import fixture_text

# Two steps, code in the first, one success edge, no trigger.
REFERRAL_DOC = fixture_text("referral.yaml")

# The same two steps behind a disabled webhook trigger that starts the first one.
REFERRAL_WITH_WEBHOOK = REFERRAL_DOC.replace(
    "edges:\n", fixture_text("referral_webhook_part.yaml"), 1
)

# Code in two steps and a failure edge (the web page imports it; the client draws it).
CODED_REFERRAL_DOC = fixture_text("coded_referral.yaml")

# A Lightning project.yaml with three workflows: every condition type (always,
# on_job_success, on_job_failure, js_expression with a label), a disabled edge, a
# credential, webhook and cron triggers; the second hands off to the third's webhook.
REFERRAL_PROJECT = fixture_text("referral_project.lightning.yaml")
