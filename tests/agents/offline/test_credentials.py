"""The offline model attaches a project credential to steps (by adaptor or by name),
in any of the phrasings people use, and asks when it cannot tell which."""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import credentials as credential_rules
from tests.agents.offline.cases import Case, check_case, check_example, example_params

CASES = [
    Case(
        "by-adaptor",
        "referral",
        "use the payer-portal credential for the http steps",
        calls=(("attach_credential", {"credential": "payer-portal", "adaptor": "http"}),),
        says=("payer-portal", "Get referrals"),
    ),
    Case(
        "by-adaptor-every",
        "referral",
        "please attach credential payer-portal to every fhir step",
        calls=(("attach_credential", {"credential": "payer-portal", "adaptor": "fhir"}),),
    ),
    Case(
        "by-adaptor-everyday-word",
        "referral",
        "the portal steps should use the payer-portal credential",
        calls=(("attach_credential", {"credential": "payer-portal", "adaptor": "http"}),),
    ),
    Case(
        "by-adaptor-steps-that-use",
        "referral",
        "assign the Lab API credential to the steps using http",
        calls=(("attach_credential", {"credential": "Lab API", "adaptor": "http"}),),
    ),
    Case(
        "by-name-quoted",
        "referral",
        "Send email should use credential 'Clinic mailbox'",
        calls=(
            ("attach_credential", {"credential": "Clinic mailbox", "job_keys": ["send-email"]}),
        ),
    ),
    Case(
        "by-names",
        "referral",
        "give get referrals and check coverage the sandbox credential",
        calls=(
            (
                "attach_credential",
                {"credential": "sandbox", "job_keys": ["get-referrals", "check-coverage"]},
            ),
        ),
    ),
    Case(
        "set-the-credential-of",
        "referral",
        "set the credential of send sms to twilio-prod",
        calls=(("attach_credential", {"credential": "twilio-prod", "job_keys": ["send-sms"]}),),
    ),
    Case(
        "every-step",
        "referral",
        "use the raw-config credential for all steps",
        calls=(
            (
                "attach_credential",
                {
                    "credential": "raw-config",
                    "job_keys": ["get-referrals", "check-coverage", "send-email", "send-sms"],
                },
            ),
        ),
    ),
    Case(
        "make-all-the-adaptor-steps-use",
        "referral",
        "make all the fhir steps use credential fhir-prod",
        calls=(("attach_credential", {"credential": "fhir-prod", "adaptor": "fhir"}),),
    ),
    Case(
        "needs-to-use",
        "referral",
        "get referrals needs to use the payer-portal credential",
        calls=(
            ("attach_credential", {"credential": "payer-portal", "job_keys": ["get-referrals"]}),
        ),
    ),
    Case(
        "no-steps-asks",
        "referral",
        "use the payer-portal credential",
        calls=(),
        unchanged=True,
        says=('Which steps should use the "payer-portal" credential',),
    ),
    Case(
        "no-name-asks",
        "referral",
        "attach the credential to check coverage",
        calls=(),
        unchanged=True,
        says=("Which credential",),
    ),
    Case(
        "ambiguous-step-asks",
        "referral",
        "send should use the clinic credential",
        calls=(),
        unchanged=True,
        says=('Which step do you mean by "send"',),
    ),
    Case(
        "no-step-on-that-adaptor",
        "referral",
        "use the warehouse credential for the postgres steps",
        unchanged=True,
        says=("No step uses postgresql",),
    ),
    Case(
        "an-adaptor-change-is-still-an-adaptor-change",
        "referral",
        "check coverage should use fhir@5.0.15",
        calls=(
            (
                "update_jobs",
                {"jobs": [{"key": "check-coverage", "adaptor": "fhir@5.0.15"}]},
            ),
        ),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_credential_requests(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(credential_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)
