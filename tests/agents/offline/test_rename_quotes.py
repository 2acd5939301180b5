"""Renames whose names hold a separator word ("to", "as"): quoted names are literal, and
an unquoted rename that splits more than one way asks instead of guessing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.offline.spec import read_spec
from agents.offline.spec_revise import revise_plan
from tests.agents.offline.documents import REFERRAL_YAML
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument
from tools.plan import ProjectPlan

SPECS = Path(__file__).parent / "specs"


def _portal_doc() -> WorkflowDocument:
    return WorkflowDocument.from_yaml(
        REFERRAL_YAML.replace("name: Check coverage", "name: Go to BlueCross portal")
    )


def _names(doc: WorkflowDocument) -> dict[str, str]:
    return {key: job.name for key, job in doc.structure.jobs.items()}


@pytest.mark.parametrize(
    "text",
    [
        "rename 'Go to BlueCross portal' to 'Open BlueCross portal'",
        'rename "Go to BlueCross portal" to "Open BlueCross portal"',
        "rename \u2018Go to BlueCross portal\u2019 to \u2018Open BlueCross portal\u2019",
        "rename \u201cGo to BlueCross portal\u201d to \u201cOpen BlueCross portal\u201d",
        "please rename the step 'Go to BlueCross portal' to Open BlueCross portal",
        "Rename 'go to bluecross portal' as \"Open BlueCross portal\".",
        "rename go to bluecross portal to 'Open BlueCross portal'",
        "rename `Go to BlueCross portal` to `Open BlueCross portal`",
    ],
)
def test_quoted_old_name_is_taken_literally(text: str) -> None:
    outcome = run_turn(_portal_doc(), text)
    assert _names(outcome.doc)["check-coverage"] == "Open BlueCross portal", outcome.final_text
    assert "Open BlueCross portal" in outcome.final_text


@pytest.mark.parametrize(
    ("text", "new_name"),
    [
        ('rename "Send SMS" to "Text patient"', "Text patient"),
        ('rename send sms to "Go to patient"', "Go to patient"),
        ("rename send sms to \u201cHand over to James\u201d", "Hand over to James"),
        ("rename 'Send SMS' to 'Refer to cardiology as urgent'", "Refer to cardiology as urgent"),
        ('rename "send sms" as "Text the patient"', "Text the patient"),
    ],
)
def test_quoted_new_name_is_taken_literally(text: str, new_name: str) -> None:
    outcome = run_turn(_portal_doc(), text)
    assert _names(outcome.doc)["send-sms"] == new_name, outcome.final_text


@pytest.mark.parametrize(
    "text",
    [
        "rename Go to BlueCross portal to Open BlueCross portal",
        "rename go to bluecross portal to open portal",
        "please rename Go to BlueCross portal to Visit BlueCross portal",
        "rename go to bluecross portal as Open BlueCross portal",
    ],
)
def test_unquoted_rename_that_splits_two_ways_asks(text: str) -> None:
    doc = _portal_doc()
    before = doc.to_yaml()
    outcome = run_turn(doc, text)
    assert outcome.tool_calls == []
    assert outcome.doc.to_yaml() == before
    assert "Do you mean renaming" in outcome.final_text
    assert "quotes" in outcome.final_text
    assert "Nothing was changed" in outcome.final_text


def test_unquoted_rename_with_one_reading_still_applies() -> None:
    outcome = run_turn(_portal_doc(), "rename send sms to Go to patient")
    assert _names(outcome.doc)["send-sms"] == "Go to patient", outcome.final_text


def test_quoted_name_that_is_not_a_step_asks() -> None:
    doc = _portal_doc()
    before = doc.to_yaml()
    outcome = run_turn(doc, "rename 'Go to Aetna portal' to 'Open Aetna portal'")
    assert outcome.doc.to_yaml() == before
    assert 'no step called "Go to Aetna portal"' in outcome.final_text


def test_plan_feedback_rename_takes_quoted_names_literally() -> None:
    plan = read_spec((SPECS / "four_processes.md").read_text())
    assert isinstance(plan, ProjectPlan)
    first = revise_plan(plan, 'rename Coverage check to "Go to payer portal"')
    assert isinstance(first, ProjectPlan), first
    assert "Go to payer portal" in [w.name for w in first.workflows]
    second = revise_plan(
        first, "rename \u2018Go to payer portal\u2019 to \u2018Open payer portal\u2019"
    )
    assert isinstance(second, ProjectPlan), second
    assert "Open payer portal" in [w.name for w in second.workflows]
    assert "Go to payer portal" not in [w.name for w in second.workflows]
