"""The offline model through the turn harness: test runs, "fix it" and "what happens if I
remove X" (the preview tool), in phrasings beyond the rule examples."""

from __future__ import annotations

import json

import pytest

from agents.models.base import RequestContext
from agents.offline.plan import Plan, Reply
from agents.offline.planner import plan
from tests.agents.offline.documents import ASK_SEND, DOCS
from tests.agents.offline.harness import run_turn
from tools.document.impact import impact
from tools.document.redaction import redact
from tools.registry import run_tool


def test_the_preview_answer_is_the_impact_word_for_word() -> None:
    doc = DOCS["referral"]()
    copy = DOCS["referral"]()
    assert run_tool(copy, "remove_jobs", {"keys": ["get-referrals"]}).ok
    expected = impact(doc.structure, copy.structure).text
    outcome = run_turn(doc, "what would break if I deleted get referrals")
    assert expected and expected in outcome.final_text
    assert outcome.doc.to_yaml() == DOCS["referral"]().to_yaml()


def test_answering_which_step_previews_the_one_picked() -> None:
    doc = DOCS["referral"]()
    asked = run_turn(doc, "what happens if I remove send")
    assert asked.final_text.startswith(ASK_SEND)
    history = [
        {"role": "user", "content": "what happens if I remove send"},
        {"role": "assistant", "content": asked.final_text},
    ]
    outcome = run_turn(doc, "the sms one", history=history)
    assert outcome.tool_calls == [
        ("preview_change", {"tool": "remove_jobs", "input": {"keys": ["send-sms"]}})
    ]
    assert "The step 'Send SMS' would be removed." in outcome.final_text


LAST_RUN = (
    "The test run failed at 'Check coverage' (check-coverage): TypeError: Cannot read "
    'properties of undefined (reading \'status\'). Its input: {"data": {"patientId": "p-1"}}'
)


@pytest.mark.parametrize(
    "text", ["fix it", "please fix the failed run", "", "debug it", "make it work"]
)
def test_fix_after_a_failed_run_uses_its_step_error_and_input(text: str) -> None:
    doc = DOCS["referral"]()
    outcome = run_turn(doc, text, last_run=LAST_RUN)
    assert outcome.tool_calls == []
    assert "nothing to fix" not in outcome.final_text
    for fragment in ("Check coverage", "TypeError", "p-1"):
        assert fragment in outcome.final_text
    assert outcome.doc.to_yaml() == doc.to_yaml()


def test_fix_with_errors_and_a_failed_run_takes_the_errors_flow() -> None:
    doc = DOCS["disconnected"]()
    outcome = run_turn(
        doc, "fix it", errors="Trigger 'webhook' is not connected to a step yet.", last_run=LAST_RUN
    )
    assert [name for name, _ in outcome.tool_calls] == ["add_edges"]


def test_a_failed_run_does_not_capture_other_requests() -> None:
    doc = DOCS["referral"]()
    context = RequestContext(
        user_text="rename send sms to Text patient",
        structure=redact(doc.structure),
        last_run=LAST_RUN,
    )
    outcome = plan(context)
    assert isinstance(outcome, Plan) and [c.name for c in outcome.calls] == ["update_jobs"]
    nothing = plan(RequestContext(user_text="fix it", structure=redact(doc.structure)))
    assert isinstance(nothing, Reply) and "nothing to fix" in nothing.text


def test_a_long_failed_run_is_cut_between_words_never_inside_a_url() -> None:
    doc = DOCS["referral"]()
    url = "https://payer.example/coverage/eligibility?member=M-123456&plan=BLUECROSS-HMO"
    last_run = (
        "The test run failed at 'Check coverage' (check-coverage): Error: no sample response "
        f"for GET {url}. Its input: " + json.dumps({"data": {"note": "x " * 200}})
    )
    outcome = run_turn(doc, "fix it", last_run=last_run)
    assert url in outcome.final_text
    assert " …" in outcome.final_text
    assert outcome.doc.to_yaml() == doc.to_yaml()
