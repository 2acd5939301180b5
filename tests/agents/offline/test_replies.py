"""The offline model through the turn harness.

Replies: read-only sessions, requests it cannot parse, answers in plain words.
"""

from __future__ import annotations

import pytest

from agents.models.base import ModelRequest, RequestContext
from tests.agents.offline.cases import ask
from tests.agents.offline.documents import CAN_DO, DOCS
from tests.agents.offline.harness import run_turn
from tools.document.redaction import redact

UNPARSED = [
    "what's the weather like",
    "make it better",
    "optimise everything for performance",
    "please do the needful",
    "sing me a song",
    "🙂",
]


@pytest.mark.parametrize("text", UNPARSED)
def test_unparsed_gets_capability_answer(text: str) -> None:
    doc = DOCS["referral"]()
    before = doc.to_yaml()
    outcome = run_turn(doc, text)
    assert outcome.tool_calls == []
    assert doc.to_yaml() == before
    assert CAN_DO in outcome.final_text
    assert "rename A to B" in outcome.final_text


def test_planner_explains_a_tool_error_from_the_results() -> None:
    doc = DOCS["referral"]()
    use = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "remove_jobs",
        "input": {"keys": ["check-coverage"]},
    }
    result = {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "Error (declined): the user declined. The workflow was not changed.",
        "is_error": True,
    }
    response = ask(
        ModelRequest(
            role="planner",
            system="",
            messages=[
                {"role": "user", "content": "remove check coverage"},
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ],
            context=RequestContext(
                user_text="remove check coverage", structure=redact(doc.structure)
            ),
        )
    )
    assert response.stop_reason == "end_turn"
    assert "declined" in response.text and "Nothing was changed" in response.text
