"""Every deterministic grader: a passing case and a failing one."""

from __future__ import annotations

from evals.graders import grade_deterministic, run_passed
from evals.graders.base import GradeResult
from evals.graders.behaviour import (
    asked_question,
    completed,
    confirmation,
    mutation_policy,
    reply_text,
    route,
)
from evals.graders.budget import within_budget
from evals.graders.consistency import reply_matches_diff
from evals.graders.integrity import document_valid, ids_preserved
from evals.graders.structure import equal_except, expected_structure
from tests.evals.helpers import BROKEN, REFERRAL, edited, outcome, scenario

DEDUPE = (
    ("add_jobs", {"jobs": [{"name": "Dedupe referrals", "adaptor": "common"}]}),
    (
        "update_edges",
        {
            "edges": [
                {
                    "source": "get-referrals",
                    "target": "check-coverage",
                    "new_target": "dedupe-referrals",
                }
            ]
        },
    ),
    ("add_edges", {"edges": [{"source": "dedupe-referrals", "target": "check-coverage"}]}),
)
DEDUPE_EXPECT = {
    "jobs": [{"ref": "Dedupe referrals", "adaptor": "common"}],
    "edges": [
        {
            "source": "get-referrals",
            "target": "Dedupe referrals",
            "condition_type": "on_job_success",
        },
        {"source": "~dedupe", "target": "check-coverage"},
    ],
    "edges_absent": [{"source": "get-referrals", "target": "check-coverage"}],
    "trigger": {"type": "webhook", "enabled": False, "target": "get-referrals"},
}


def _passes(result: GradeResult | None) -> bool:
    assert result is not None
    assert not result.skipped
    return result.passed


# --- expected structure ------------------------------------------------------------


def test_expected_structure_passes_on_the_right_edit() -> None:
    result = expected_structure(
        scenario(DEDUPE_EXPECT), outcome(REFERRAL, edited(REFERRAL, *DEDUPE))
    )
    assert _passes(result)
    assert result is not None and result.score == 1.0


def test_expected_structure_fails_when_the_step_is_added_but_not_wired() -> None:
    after = edited(REFERRAL, DEDUPE[0])
    result = expected_structure(scenario(DEDUPE_EXPECT), outcome(REFERRAL, after))
    assert result is not None and not result.passed
    assert "missing edge get-referrals -> Dedupe referrals" in result.comment
    assert "should be gone" in result.comment
    assert 0 < result.score < 1


def test_expected_structure_checks_conditions_names_adaptors_and_triggers() -> None:
    after = edited(
        REFERRAL,
        (
            "update_edges",
            {
                "edges": [
                    {"source": "check-coverage", "target": "send-email", "condition_type": "always"}
                ]
            },
        ),
        ("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"}),
    )
    expect = {
        "edges": [
            {"source": "check-coverage", "target": "send-email", "condition_type": "on_job_failure"}
        ],
        "jobs": [{"ref": "send-email", "name": "Email coordinator", "adaptor": "twilio"}],
        "trigger": {"type": "cron", "cron_expression": "0 7 * * *"},
    }
    result = expected_structure(scenario(expect), outcome(REFERRAL, after))
    assert result is not None and not result.passed
    for fragment in (
        "is always, expected on_job_failure",
        "Email coordinator",
        "uses gmail",
        "cron is",
    ):
        assert fragment in result.comment


def test_expected_structure_does_not_apply_without_expectations() -> None:
    assert expected_structure(scenario({}), outcome(REFERRAL)) is None


# --- equal except --------------------------------------------------------------------


def test_equal_except_passes_when_only_allowed_paths_change() -> None:
    after = edited(
        REFERRAL, ("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]})
    )
    result = equal_except(
        scenario({"equal_except": ["jobs.send-sms.name"]}), outcome(REFERRAL, after)
    )
    assert _passes(result)


def test_equal_except_fails_on_a_stray_change() -> None:
    after = edited(
        REFERRAL,
        ("update_jobs", {"jobs": [{"key": "send-sms", "name": "Text patient"}]}),
        ("set_trigger", {"type": "webhook", "enabled": True}),
    )
    result = equal_except(
        scenario({"equal_except": ["jobs.send-sms.name"]}), outcome(REFERRAL, after)
    )
    assert result is not None and not result.passed
    assert "triggers.webhook.enabled" in result.comment


# --- ids and bodies preserved ------------------------------------------------------


def test_ids_preserved_passes_for_a_rekey_that_keeps_id_and_code() -> None:
    after = edited(
        REFERRAL, ("update_jobs", {"jobs": [{"key": "get-referrals", "new_key": "fetch"}]})
    )
    assert _passes(ids_preserved(scenario({}), outcome(REFERRAL, after)))


def test_ids_preserved_fails_when_a_step_is_recreated_with_a_new_id() -> None:
    after = edited(
        REFERRAL,
        ("remove_jobs", {"keys": ["send-sms"]}),
        ("add_jobs", {"jobs": [{"key": "send-sms", "name": "Send SMS", "adaptor": "twilio"}]}),
    )
    result = ids_preserved(scenario({}), outcome(REFERRAL, after))
    assert result is not None and not result.passed
    assert "'send-sms' got a new id" in result.comment


def test_ids_preserved_fails_when_untouched_code_changes_unless_allowed() -> None:
    after = REFERRAL.replace("status: 'new'", "status: 'all'")
    result = ids_preserved(scenario({}), outcome(REFERRAL, after))
    assert result is not None and not result.passed
    assert "code of 'get-referrals' changed" in result.comment
    allowed = scenario({"body_may_change": ["Get referrals"]})
    assert _passes(ids_preserved(allowed, outcome(REFERRAL, after)))


# --- document valid ----------------------------------------------------------------


def test_document_valid_passes_without_new_problems() -> None:
    assert _passes(document_valid(scenario({}), outcome(REFERRAL, edited(REFERRAL, *DEDUPE))))


def test_document_valid_fails_on_a_new_problem() -> None:
    after = REFERRAL.replace("condition_type: on_job_failure", "condition_type: js_expression")
    result = document_valid(scenario({}), outcome(REFERRAL, after))
    assert result is not None and not result.passed
    assert "new problems" in result.comment


def test_a_new_unreachable_step_passes_only_when_the_reply_says_so() -> None:
    stranded = edited(
        REFERRAL,
        (
            "update_edges",
            {
                "edges": [
                    {
                        "source": "get-referrals",
                        "target": "check-coverage",
                        "new_target": "send-sms",
                    }
                ]
            },
        ),
    )
    silent = document_valid(scenario({}), outcome(REFERRAL, stranded, reply="Done."))
    assert silent is not None and not silent.passed
    assert "'check-coverage' is not reached from any trigger" in silent.comment
    told = outcome(
        REFERRAL,
        stranded,
        reply="Check coverage and Send email are no longer reached from the trigger.",
    )
    assert _passes(document_valid(scenario({}), told))


def test_naming_a_step_excuses_only_its_unreachability() -> None:
    after = REFERRAL.replace("language-twilio@latest", "language-no-such-thing@latest")
    told = outcome(REFERRAL, after, reply="Send SMS now uses another adaptor (send-sms).")
    result = document_valid(scenario({}), told)
    assert result is not None and not result.passed
    assert "unknown adaptor" in result.comment


def test_fix_problems_needs_every_problem_gone() -> None:
    fixed_one = edited(
        BROKEN, ("add_edges", {"edges": [{"source": "webhook", "target": "parse-result"}]})
    )
    partial = document_valid(scenario({"fix_problems": True}), outcome(BROKEN, fixed_one))
    assert partial is not None and not partial.passed
    assert partial.score == 0.5
    fixed_all = edited(
        fixed_one,
        (
            "update_edges",
            {
                "edges": [
                    {
                        "source": "parse-result",
                        "target": "store-result",
                        "condition_expression": "state.ok",
                    }
                ]
            },
        ),
    )
    assert _passes(document_valid(scenario({"fix_problems": True}), outcome(BROKEN, fixed_all)))


# --- mutation policy, asking, confirmation, route, reply text -----------------------


def test_no_mutation_passes_when_untouched() -> None:
    assert _passes(
        mutation_policy(scenario({"mutation": "none"}), outcome(REFERRAL, reply="It fetches."))
    )


def test_no_mutation_fails_on_a_change() -> None:
    after = edited(REFERRAL, ("remove_jobs", {"keys": ["send-sms"]}))
    result = mutation_policy(scenario({"mutation": "none"}), outcome(REFERRAL, after))
    assert result is not None and not result.passed


def test_no_mutation_fails_when_a_read_only_turn_attempts_a_mutating_tool() -> None:
    ro = scenario({"mutation": "none"}, turns=[{"content": "remove it", "read_only": True}])
    calls = [{"name": "remove_jobs", "input": {"keys": ["send-sms"]}}]
    result = mutation_policy(ro, outcome(REFERRAL, tool_calls=calls))
    assert result is not None and not result.passed
    assert "read-only" in result.comment


def test_mutation_required_fails_when_nothing_changed() -> None:
    result = mutation_policy(scenario({"mutation": "required"}), outcome(REFERRAL))
    assert result is not None and not result.passed
    assert mutation_policy(scenario({}), outcome(REFERRAL)) is None


def test_asked_question_passes_for_a_question_without_edits() -> None:
    reply = 'Which step do you mean: "Send email" or "Send SMS"?'
    assert _passes(asked_question(scenario({"asks": True}), outcome(REFERRAL, reply=reply)))


def test_asked_question_fails_when_it_edits_or_does_not_ask() -> None:
    after = edited(REFERRAL, ("remove_jobs", {"keys": ["send-sms"]}))
    edited_result = asked_question(
        scenario({"asks": True}), outcome(REFERRAL, after, reply="Which one?")
    )
    assert edited_result is not None and not edited_result.passed
    silent = asked_question(scenario({"asks": True}), outcome(REFERRAL, reply="Done."))
    assert silent is not None and not silent.passed
    assert "does not ask" in silent.comment


def test_asked_question_accepts_one_empty_placeholder_step_when_allowed() -> None:
    after = edited(REFERRAL, ("add_jobs", {"jobs": [{"name": "New step", "adaptor": "common"}]}))
    reply = 'I added an empty step "New step". What should it do?'
    strict = asked_question(scenario({"asks": True}), outcome(REFERRAL, after, reply=reply))
    assert strict is not None and not strict.passed
    lenient = scenario({"asks": True, "placeholder_ok": True})
    assert _passes(asked_question(lenient, outcome(REFERRAL, after, reply=reply)))


def test_confirmation_expected_and_unexpected() -> None:
    asked = outcome(REFERRAL, confirmations=["remove 'Check coverage'? Go ahead?"], approved=True)
    assert _passes(confirmation(scenario({"confirm": True}), asked))
    missing = confirmation(scenario({"confirm": True}), outcome(REFERRAL))
    assert missing is not None and not missing.passed
    unexpected = confirmation(scenario({"confirm": False}), asked)
    assert unexpected is not None and not unexpected.passed


def test_confirmation_names_the_impact() -> None:
    question = (
        "The assistant wants to disconnect the steps. 'Send email' would no longer run "
        "(no trigger would reach it). Go ahead?"
    )
    asked = outcome(REFERRAL, confirmations=[question], approved=True)
    named = scenario({"confirm": True, "confirm_contains": ["'send email' would no longer run"]})
    assert _passes(confirmation(named, asked))
    wrong = scenario({"confirm_contains": ["'Send SMS' would no longer run", "no longer run"]})
    lacking = confirmation(wrong, asked)
    assert lacking is not None and not lacking.passed and lacking.score == 0.5
    assert "'Send SMS' would no longer run" in lacking.comment
    silent = confirmation(wrong, outcome(REFERRAL))
    assert silent is not None and not silent.passed and "no confirmation" in silent.comment


def test_route_grader() -> None:
    assert _passes(route(scenario({"route": "job_code"}), outcome(REFERRAL, route="job_code")))
    wrong = route(scenario({"route": "job_code"}), outcome(REFERRAL, route="planner"))
    assert wrong is not None and not wrong.passed


def test_reply_text_contains_and_excludes() -> None:
    expect = {"reply_contains": ["Send SMS"], "reply_excludes": ["deleted"]}
    assert _passes(reply_text(scenario(expect), outcome(REFERRAL, reply="On failure: send sms.")))
    bad = reply_text(scenario(expect), outcome(REFERRAL, reply="I deleted everything."))
    assert bad is not None and not bad.passed and bad.score == 0.0


def test_completed_fails_on_errors_and_unanswered_confirmations() -> None:
    assert _passes(completed(scenario({}), outcome(REFERRAL)))
    failed = completed(scenario({}), outcome(REFERRAL, error="ModelError: boom"))
    assert not failed.passed and "boom" in failed.comment
    unanswered = completed(scenario({}), outcome(REFERRAL, confirmations=["Go ahead?"]))
    assert not unanswered.passed


# --- reply consistent with the diff ----------------------------------------------------


def test_reply_matches_diff_passes_for_true_claims() -> None:
    after = edited(REFERRAL, *DEDUPE)
    reply = 'Added the step "Dedupe referrals" between "Get referrals" and "Check coverage".'
    assert _passes(reply_matches_diff(scenario({}), outcome(REFERRAL, after, reply=reply)))


def test_reply_matches_diff_fails_on_a_false_claim() -> None:
    after = edited(REFERRAL, ("remove_jobs", {"keys": ["send-sms"]}))
    reply = 'Removed "Send email".'
    result = reply_matches_diff(scenario({}), outcome(REFERRAL, after, reply=reply))
    assert result is not None and not result.passed
    assert "'Send email'" in result.comment


def test_reply_matches_diff_fails_when_claiming_no_change_after_a_change() -> None:
    after = edited(REFERRAL, ("remove_jobs", {"keys": ["send-sms"]}))
    result = reply_matches_diff(
        scenario({}), outcome(REFERRAL, after, reply="Nothing was changed.")
    )
    assert result is not None and not result.passed


# --- budget ------------------------------------------------------------------------


def test_budget_within_and_over() -> None:
    expect = {"max_tool_rounds": 2, "max_tokens": 1000}
    assert _passes(
        within_budget(scenario(expect), outcome(REFERRAL, tool_rounds=2, tokens=(600, 100)))
    )
    over = within_budget(scenario(expect), outcome(REFERRAL, tool_rounds=3, tokens=(900, 200)))
    assert over is not None and not over.passed
    assert "3 tool rounds > 2" in over.comment and "1100 tokens > 1000" in over.comment


# --- all together ---------------------------------------------------------------------


def test_a_run_passes_only_when_every_applicable_grader_passes() -> None:
    s = scenario({**DEDUPE_EXPECT, "mutation": "required", "confirm": False})
    good = outcome(REFERRAL, edited(REFERRAL, *DEDUPE), reply='Added the step "Dedupe referrals".')
    assert run_passed(grade_deterministic(s, good))
    bad = outcome(REFERRAL, edited(REFERRAL, DEDUPE[0]), reply='Added the step "Dedupe referrals".')
    assert not run_passed(grade_deterministic(s, bad))


def test_skipped_results_do_not_count() -> None:
    results = [GradeResult.ok("a"), GradeResult.skip("judge:general", "no key")]
    assert run_passed(results)
    assert results[1].as_dict()["status"] == "skipped"
    assert not run_passed([GradeResult.fail("a", "no"), GradeResult.skip("judge", "no key")])
