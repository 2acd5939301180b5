"""Step names built from the user's words never break a possessive: OpenFn names hold no
apostrophes, and "payer's" must not become "payer s"."""

from __future__ import annotations

import pytest

from agents.offline.grammar import fit_name, step_name
from tests.agents.offline.documents import REFERRAL_YAML
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument


def _names(doc: WorkflowDocument) -> list[str]:
    return [job.name for job in doc.structure.jobs.values()]


def _no_broken_word(names: list[str]) -> None:
    for name in names:
        assert " s " not in f"{name} ", names
        assert "'" not in name, names


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rename check coverage to Check patient's insurance", "Check patient insurance"),
        ('rename check coverage to "Check patient\'s insurance"', "Check patient insurance"),
        (
            "rename check coverage to \u201cCheck patient\u2019s insurance\u201d",
            "Check patient insurance",
        ),
        ("rename send sms to Text the payers' office", "Text the payers office"),
        ("rename send email to 'Email James's team'", "Email James team"),
    ],
)
def test_rename_keeps_possessives_whole(text: str, expected: str) -> None:
    outcome = run_turn(WorkflowDocument.from_yaml(REFERRAL_YAML), text)
    assert expected in _names(outcome.doc), outcome.final_text
    assert f'"{expected}"' in outcome.final_text
    _no_broken_word(_names(outcome.doc))


@pytest.mark.parametrize(
    "text",
    [
        "add a step called Check payer's rules after check coverage",
        "add a step 'Check payer\u2019s rules' after check coverage",
        "add a step to verify the payer's rules after check coverage",
        "insert Verify payer's policy between get referrals and check coverage",
    ],
)
def test_added_step_names_keep_possessives_whole(text: str) -> None:
    outcome = run_turn(WorkflowDocument.from_yaml(REFERRAL_YAML), text)
    added = [n for n in _names(outcome.doc) if "payer" in n.lower()]
    assert len(added) == 1, outcome.final_text
    assert "payer " in added[0].lower() + " " and "payer s" not in added[0].lower()
    _no_broken_word(_names(outcome.doc))
    assert "payer s" not in outcome.final_text.lower()


@pytest.mark.parametrize(
    "text",
    [
        "create a workflow that gets referrals from http, checks the patient's insurance with "
        "fhir, then emails the payer's contact with gmail",
        "1. Get the referral from http\n2. Check the patient's insurance with fhir\n"
        "3. Email the payers' office with gmail",
        "create a workflow that fetches the member\u2019s plan from http and then checks the "
        "payer's rules with fhir",
    ],
)
def test_built_step_names_keep_possessives_whole(text: str) -> None:
    outcome = run_turn(WorkflowDocument.from_yaml(""), text)
    assert outcome.doc.structure.jobs, outcome.final_text
    _no_broken_word(_names(outcome.doc))
    assert " s " not in outcome.final_text


def test_rename_the_workflow_keeps_possessives_whole() -> None:
    outcome = run_turn(
        WorkflowDocument.from_yaml(REFERRAL_YAML), "rename the workflow to Maria's referrals"
    )
    assert outcome.doc.structure.name == "Maria referrals", outcome.final_text


@pytest.mark.parametrize(
    ("raw", "fitted"),
    [
        ("Check patient's insurance", "Check patient insurance"),
        ("Email the payers' office", "Email the payers office"),
        ("Don't resend", "Dont resend"),
        ("Check coverage", "Check coverage"),
    ],
)
def test_fit_name(raw: str, fitted: str) -> None:
    assert fit_name(raw) == fitted
    assert step_name(raw) == fitted.replace("the ", "")
