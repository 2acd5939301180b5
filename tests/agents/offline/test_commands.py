"""The offline model through the turn harness.

Start over, several commands in one message, follow-ups, errors, undo, and
nothing unparsed swallowed into a name.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents.offline.documents import ASK_SEND, DOCS
from tests.agents.offline.harness import run_turn
from tools.document import WorkflowDocument

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
