"""Notes about steps that never run come from the workflow's graph after the change (never
from the graph between two calls of one change), once, not once per step."""

from __future__ import annotations

import pytest

from tests.agents.offline.documents import REFERRAL_YAML
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument
from tools.document.reach import reachable_jobs


def _doc() -> WorkflowDocument:
    return WorkflowDocument.from_yaml(REFERRAL_YAML)


@pytest.mark.parametrize(
    "text",
    [
        "add a step called Check payer rules after check coverage",
        "insert Verify policy between get referrals and check coverage",
        "move send sms after send email",
        "add a step to verify the payer's rules after get referrals",
        "remove get referrals",
    ],
)
def test_no_never_runs_note_when_every_step_runs(text: str) -> None:
    outcome = run_turn(_doc(), text)
    structure = outcome.doc.structure
    assert reachable_jobs(structure) == set(structure.jobs), outcome.final_text
    assert "never run" not in outcome.final_text, outcome.final_text
    assert "not connected to a step" not in outcome.final_text, outcome.final_text


@pytest.mark.parametrize(
    "text",
    [
        "disable the connection from the webhook to get referrals",
        "disable the edge from the trigger to get referrals",
        "turn off the link between the webhook and get referrals",
    ],
)
def test_a_disabled_trigger_connection_is_said_once(text: str) -> None:
    outcome = run_turn(_doc(), text)
    assert reachable_jobs(outcome.doc.structure) == set(), outcome.final_text
    assert outcome.final_text.count("Note:") == 1, outcome.final_text
    assert "is disabled, so no step runs" in outcome.final_text
    assert "never runs" not in outcome.final_text


@pytest.mark.parametrize(
    ("text", "stranded"),
    [
        ("disconnect get referrals from check coverage", ["Check coverage", "Send email"]),
        ("remove the edge from check coverage to send sms", ["Send SMS"]),
        ("disconnect check coverage from send email", ["Send email"]),
    ],
)
def test_steps_that_never_run_are_named_in_one_note(text: str, stranded: list[str]) -> None:
    outcome = run_turn(_doc(), text)
    structure = outcome.doc.structure
    unreached = {structure.jobs[k].name for k in set(structure.jobs) - reachable_jobs(structure)}
    assert set(stranded) <= unreached
    notes = [line for line in outcome.final_text.split("\n") if "never run" in line]
    assert len(notes) == 1, outcome.final_text
    for name in unreached:
        assert f'"{name}"' in notes[0]
    for key in reachable_jobs(structure):
        assert f'"{structure.jobs[key].name}"' not in notes[0]


def test_a_disabled_trigger_is_not_said_on_every_step() -> None:
    # The sample's webhook is disabled (enabled: false): its steps still run when it is on.
    outcome = run_turn(_doc(), "rename send sms to Text patient")
    assert "never run" not in outcome.final_text, outcome.final_text
