"""A name the user typed that had to change to fit OpenFn's name rule (letters, digits,
spaces, "-" and "_"): the reply says what it became and why, and only then."""

from __future__ import annotations

from typing import Any

import pytest

from agents.offline.grammar import NAME_RULE, name_note
from tests.agents.offline.documents import REFERRAL_YAML
from tests.agents.offline.harness import run_turn
from tests.agents.offline.plan_helpers import SPECS, ask, example, project
from tools.document import WorkflowDocument

NOTE = f'Named it "{{}}" ({NAME_RULE}).'


def test_name_note_only_when_the_name_changed() -> None:
    assert name_note("Check patient's insurance", "Check patient insurance") == NOTE.format(
        "Check patient insurance"
    )
    assert name_note("Check  patient insurance ", "Check patient insurance") == ""
    assert name_note("Check patient insurance", "Check patient insurance") == ""
    assert name_note("???", "") == ""


@pytest.mark.parametrize(
    ("text", "fitted"),
    [
        ("rename check coverage to Check patient's insurance", "Check patient insurance"),
        ('rename check coverage to "Verify payer/plan"', "Verify payer plan"),
        ("rename the workflow to Referrals & intake", "Referrals intake"),
        ('add a step called "Dedupe patients!" after check coverage', "Dedupe patients"),
    ],
)
def test_a_changed_name_is_said_with_why(text: str, fitted: str) -> None:
    outcome = run_turn(WorkflowDocument.from_yaml(REFERRAL_YAML), text)
    assert NOTE.format(fitted) in outcome.final_text, outcome.final_text
    assert outcome.final_text.count(NAME_RULE) == 1


@pytest.mark.parametrize(
    "text",
    [
        "rename check coverage to Check patient insurance",
        'rename check coverage to "Verify payer-plan_2"',
        "rename the workflow to Referral intake v2",
        'add a step called "Dedupe patients" after check coverage',
        # A name read from what the step does was not typed as a name: nothing to say.
        "add a step to check the patient's insurance after check coverage",
    ],
)
def test_a_name_kept_as_typed_says_nothing_of_the_rule(text: str) -> None:
    outcome = run_turn(WorkflowDocument.from_yaml(REFERRAL_YAML), text)
    assert outcome.tool_calls, outcome.final_text
    assert NAME_RULE not in outcome.final_text, outcome.final_text


def _answer(text: str, proj: dict[str, Any]) -> tuple[str, str]:
    """(what is said with the proposal, the final answer after it was proposed)."""
    first = ask(text, project=proj)
    (use,) = first.tool_uses
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": "Plan proposed."}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": text},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [result]},
    ]
    return first.text, ask(text, project=proj, messages=messages).text


def test_plan_feedback_rename_says_what_the_name_became() -> None:
    proj = project(example("four_processes.md"), revising=True)
    said, final = _answer("rename Coverage check to Check patient's insurance", proj)
    assert NOTE.format("Check patient insurance") in said
    assert NOTE.format("Check patient insurance") in final
    said, final = _answer("rename Coverage check to Eligibility check", proj)
    assert NAME_RULE not in said and NAME_RULE not in final


def test_a_spec_heading_that_changed_is_said() -> None:
    text = (SPECS / "four_processes.md").read_text()
    assert "## Coverage check" in text
    changed = text.replace("## Coverage check", "## Coverage check (payer's side)", 1)
    said, final = _answer(changed, project())
    assert NOTE.format("Coverage check payer side") in said
    assert NOTE.format("Coverage check payer side") in final, final
    assert NAME_RULE not in _answer(text, project())[1]
