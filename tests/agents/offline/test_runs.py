"""The offline model through the turn harness: test runs, "fix it" and "what happens if I
remove X" (the preview tool), in phrasings beyond the rule examples."""

from __future__ import annotations

import json

import pytest

from agents.models.base import RequestContext
from agents.offline.plan import Plan, Reply
from agents.offline.planner import plan
from agents.offline.rules import Example, Rule
from agents.offline.rules import runs as run_rules
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import ASK_SEND, DOCS
from tests.agents.offline.harness import run_turn
from tools.document.impact import impact
from tools.document.redaction import redact
from tools.registry import run_tool

SAMPLE = '{"patientId": "p-1", "plan": "HMO"}'
AS_DATA = {"input": {"data": {"patientId": "p-1", "plan": "HMO"}}}

CASES = [
    # --- test runs ----------------------------------------------------------------------
    *(
        Case(f"run-{i}", "referral", text, calls=(("test_run", AS_DATA),), unchanged=True)
        for i, text in enumerate(
            [
                f"test it with {SAMPLE}",
                f"please test the workflow with {SAMPLE}",
                f"can you try this workflow out on {SAMPLE}",
                f"run it with this sample: {SAMPLE}",
                f"Test-run the flow using {SAMPLE}.",
                f"do a dry run with {SAMPLE}",
                f"let's see if it works with {SAMPLE}",
                'test it with {\n  "patientId": "p-1",\n  "plan": "HMO"\n}',
                f"execute the pipeline against {SAMPLE}",
                f"give it a go with {SAMPLE}",
                f'test it with {{"data": {SAMPLE}}}',  # already a state: taken as it is
            ]
        )
    ),
    *(
        Case(f"run-bare-{i}", "referral", text, calls=(("test_run", {}),), unchanged=True)
        for i, text in enumerate(
            ["run it", "Test it.", "please run the workflow now", "try it out", "run a test"]
        )
    ),
    Case(
        "run-state-kept",
        "referral",
        'try it on {"data": {"plan": "PPO"}, "configuration": {"baseUrl": "http://x"}}',
        calls=(
            (
                "test_run",
                {"input": {"data": {"plan": "PPO"}, "configuration": {"baseUrl": "http://x"}}},
            ),
        ),
    ),
    *(
        Case(
            f"run-bad-json-{i}",
            "referral",
            text,
            calls=(),
            unchanged=True,
            says=("JSON", "nothing was run"),
        )
        for i, text in enumerate(
            [
                'test it with {"plan": "HMO",}',
                "run it with {'plan': 'HMO'}",
                'try it on {"plan": ',
                "test the workflow with [1, 2]",
                'test it with "just text"'.replace('"just text"', '["just text"]'),
            ]
        )
    ),
    # Schedules and step names are not test runs.
    Case(
        "run-schedule-stays",
        "referral",
        "run it on weekends at 10",
        calls=(("set_trigger", {"type": "cron", "cron_expression": "0 10 * * 0,6"}),),
    ),
    Case(
        "run-schedule-daily",
        "referral",
        "run it every day at 9",
        calls=(("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"}),),
    ),
    Case(
        "run-empty-workflow",
        "empty",
        "test it",
        calls=(),
        says=("no steps",),
    ),
    # --- fix it without anything to fix ---------------------------------------------------
    *(
        Case(
            f"fix-nothing-{i}", "referral", text, calls=(), unchanged=True, says=("nothing to fix",)
        )
        for i, text in enumerate(
            [
                "fix it",
                "please fix the errors",
                "repair the workflow",
                "sort it out",
                "fix what failed",
                "make the test pass",
            ]
        )
    ),
    # --- what happens if I remove X ---------------------------------------------------------
    *(
        Case(
            f"preview-coverage-{i}",
            "referral",
            text,
            calls=(
                ("preview_change", {"tool": "remove_jobs", "input": {"keys": ["check-coverage"]}}),
            ),
            unchanged=True,
            says=(
                "The step 'Check coverage' would be removed.",
                "'Send email' and 1 more step would no longer run: 'Send SMS'",
                "Nothing was changed",
            ),
            never_says=("Get referrals",),
        )
        for i, text in enumerate(
            [
                "What happens if I remove the coverage check?",
                "what would happen if we deleted check coverage",
                "what breaks if check-coverage is removed",
                "so what would stop working if someone got rid of check coverage?",
                "what's the impact of removing check coverage",
                "how would dropping the check coverage step affect things",
                "what happens without check coverage",
                "is it okay to delete check coverage",
                "can I safely remove check coverage?",
                "which steps would stop running if check coverage went away",
                "what if there was no check coverage step",
                "tell me what happens if I take out step 2",
                "what depends on check coverage",
                "what if check coverage got deleted from the workflow",
            ]
        )
    ),
    Case(
        "preview-two-steps",
        "referral",
        "what happens if I remove send email and send sms",
        calls=(
            (
                "preview_change",
                {"tool": "remove_jobs", "input": {"keys": ["send-email", "send-sms"]}},
            ),
        ),
        says=("'Send email' and 1 more step would be removed: 'Send SMS'.",),
        unchanged=True,
    ),
    Case(
        "preview-last-step",
        "chain",
        "what would break if upsert records were removed",
        calls=(("preview_change", {"tool": "remove_jobs", "input": {"keys": ["upsert-records"]}}),),
        says=("The step 'Upsert records' would be removed.",),
        never_says=("no longer run", "Fetch patients", "Transform data"),
        unchanged=True,
    ),
    Case(
        "preview-disconnect",
        "referral",
        "what happens if I unlink get referrals from check coverage",
        calls=(
            (
                "preview_change",
                {
                    "tool": "remove_edges",
                    "input": {"edges": [{"source": "get-referrals", "target": "check-coverage"}]},
                },
            ),
        ),
        says=(
            "'Check coverage' and 2 more steps would no longer run: 'Send email', 'Send SMS'",
            "The connection from 'Get referrals' to 'Check coverage' would be removed.",
        ),
        unchanged=True,
    ),
    Case(
        "preview-edge-removed",
        "referral",
        "what if the edge from check coverage to send sms is deleted",
        calls=(
            (
                "preview_change",
                {
                    "tool": "remove_edges",
                    "input": {"edges": [{"source": "check-coverage", "target": "send-sms"}]},
                },
            ),
        ),
        says=("'Send SMS' would no longer run",),
        never_says=("Send email",),
        unchanged=True,
    ),
    Case(
        "preview-ambiguous-asks",
        "referral",
        "what happens if I remove send",
        calls=(),
        says=(ASK_SEND,),
        unchanged=True,
    ),
    Case(
        "preview-unknown-step",
        "referral",
        "what happens if I delete the billing step",
        calls=(),
        says=("There is no step called",),
        unchanged=True,
    ),
    Case(
        "preview-trigger",
        "referral",
        "what happens if I remove the trigger",
        calls=(),
        says=("can't be removed",),
        unchanged=True,
    ),
    Case(
        "preview-read-only",
        "referral",
        "what happens if I remove check coverage",
        options={"read_only": True},
        calls=(("preview_change", {"tool": "remove_jobs", "input": {"keys": ["check-coverage"]}}),),
        says=("'Send email' and 1 more step would no longer run",),
        unchanged=True,
    ),
    # Not previews: an outcome question and a plain removal stay what they were.
    Case(
        "preview-not-a-failure-question",
        "referral",
        "what happens if check coverage fails",
        calls=(),
        says=("Send SMS",),
    ),
    Case(
        "preview-condition-first",
        "referral",
        "if I take out send email, what breaks?",
        calls=(("preview_change", {"tool": "remove_jobs", "input": {"keys": ["send-email"]}}),),
    ),
    Case(
        "preview-suppose",
        "referral",
        "suppose we delete check coverage: which steps stop?",
        calls=(("preview_change", {"tool": "remove_jobs", "input": {"keys": ["check-coverage"]}}),),
        says=("Send email",),
    ),
    Case(
        "test-try-running",
        "referral",
        'start testing the workflow with {"plan": "HMO"}',
        calls=(("test_run", {"input": {"data": {"plan": "HMO"}}}),),
    ),
    Case(
        "test-try-running-bare",
        "referral",
        "try running it",
        calls=(("test_run", {}),),
    ),
    Case(
        "preview-not-a-removal",
        "referral",
        "remove send sms",
        calls=(("remove_jobs", {"keys": ["send-sms"]}),),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(run_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)


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
