"""The offline model through the turn harness.

Replies: read-only sessions, requests it cannot parse, answers in plain words.
"""

from __future__ import annotations

import pytest

from agents.models.base import ModelRequest, RequestContext
from tests.agents.offline.cases import (
    Case,
    ask,
    check_case,
    check_read_only,
)
from tests.agents.offline.documents import (
    CAN_DO,
    DOCS,
    REFERRAL_JOBS,
)
from tests.agents.offline.harness import run_turn
from tools.document.redaction import redact

CASES = [
    # --- read-only sessions ----------------------------------------------------------------
    Case(
        "ro-edit-refused",
        "referral",
        "remove check coverage",
        options={"read_only": True},
        calls=(),
        unchanged=True,
        says=("read-only",),
    ),
    Case(
        "ro-code-refused",
        "referral",
        "write the code for send email to email the coordinator",
        options={"read_only": True},
        calls=(),
        unchanged=True,
        says=("read-only",),
    ),
    Case(
        "ro-question-answered",
        "referral",
        "what happens if check coverage fails?",
        options={"read_only": True},
        calls=(),
        unchanged=True,
        says=("Send SMS",),
    ),
    Case(
        "ro-inspect-allowed",
        "referral",
        "show me the code for get referrals",
        options={"read_only": True},
        calls=(("inspect_job_code", {}),),
        unchanged=True,
    ),
    # --- things it cannot parse ------------------------------------------------------------
    Case(
        "unparsed-weather",
        "referral",
        "what's the weather like",
        calls=(),
        unchanged=True,
        says=(CAN_DO,),
    ),
    Case("unparsed-vague", "referral", "make it better", calls=(), unchanged=True, says=(CAN_DO,)),
    Case("unparsed-gibberish", "chain", "blorp zip zap", calls=(), unchanged=True, says=(CAN_DO,)),
    # --- review fixes: replies in plain words, from what the tools saved --------------------
    Case(
        "reply-reports-saved-workflow-name",
        "referral",
        "rename the workflow to Ünïcödé 🚀",
        calls=(("update_workflow", {}),),
        says=('Renamed the workflow to "Unicode"',),
        never_says=("Ünïcödé",),
    ),
    Case(
        "reply-reports-saved-step-name",
        "referral",
        "rename send sms to Ünïcödé",
        jobs={**REFERRAL_JOBS, "send-sms": ("Unicode", "twilio")},
        says=('"Unicode"',),
        never_says=("Ünïcödé",),
    ),
    Case(
        "reply-no-structure-block",
        "single",
        "remove fetch patients",
        calls=(("remove_jobs", {"keys": ["fetch-patients"]}),),
        jobs={},
        says=("Removed Fetch patients", "empty now", "postgres"),
        never_says=("The workflow now", "Workflow: Lonely"),
    ),
    Case(
        "reply-code-not-written-in-plain-words",
        "referral",
        "implement get referrals",
        calls=(("call_job_code_agent", {"job_key": "get-referrals"}),),
        unchanged=True,
        says=('"Get referrals" already has code',),
        never_says=("call_job_code_agent", "code_not_written", "No code was written for '"),
    ),
    Case(
        "reply-two-trigger-changes-two-bullets",
        "referral",
        "enable the trigger. run it every day at 9",
        calls=(
            ("set_trigger", {"enabled": True}),
            ("set_trigger", {"cron_expression": "0 9 * * *"}),
        ),
        trigger=("cron", "0 9 * * *", True),
        says=("- Enabled the trigger.", "- The trigger is now a schedule (every day at 09:00)"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


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
