"""The offline model through the turn harness.

Questions: answered from the structure, never changing anything.
"""

from __future__ import annotations

import pytest

from tests.agents.offline.documents import DOCS
from tests.agents.offline.harness import run_turn
from tools.registry import MUTATING_TOOLS

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
