"""The offline model through the turn harness.

Start over, several commands in one message, follow-ups, errors, undo, and
nothing unparsed swallowed into a name.
"""

from __future__ import annotations

from typing import Any

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import messages as other_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import (
    ASK_SEND,
    CAN_DO,
    DOCS,
    REFERRAL_EDGES,
    REFERRAL_JOBS,
)
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument

RULES = [r for r in other_rules.RULES if r.section == "other"]

CASES = [
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
    Case(
        "undo-explains-versions",
        "referral",
        "undo that",
        calls=(),
        unchanged=True,
        says=("revert",),
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
