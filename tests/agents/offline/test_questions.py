"""The offline model through the turn harness.

Questions: answered from the structure, never changing anything.
"""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import questions as question_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import (
    ASK_SEND,
    DOCS,
)
from tests.agents.offline.harness import run_turn
from tools.registry import MUTATING_TOOLS

CASES = [
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
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(question_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)


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
