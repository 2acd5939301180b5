"""The offline model through the turn harness.

Edges: connect, disconnect, retarget, conditions, enabling.
"""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import edges as edges_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import (
    REFERRAL_EDGES,
    edges_with,
    js,
    ok_and,
)

CASES = [
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
            check_coverage__send_email=js(
                ok_and("state.data.plan === 'BlueCross HMO'"), "BlueCross HMO"
            ),
        ),
    ),
    Case(
        "connect-js-expression",
        "referral",
        "hook up get referrals with send sms when state.data.urgent",
        edges=edges_with(REFERRAL_EDGES, get_referrals__send_sms=js(ok_and("state.data.urgent"))),
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
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(edges_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)
