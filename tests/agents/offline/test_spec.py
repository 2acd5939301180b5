"""Reading a structured spec into a project plan (agents/offline/README.md, "Plan mode: the
spec format")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agents.offline import spec_layout
from agents.offline.spec import Refusal, read_spec
from agents.offline.spec_revise import revise_plan
from tools.document.names import derive_key
from tools.plan import ProjectPlan, check_plan, contracts, plan_delta
from tools.plan.model import KEY_PATTERN

SPECS = Path(__file__).parent / "specs"


def spec(name: str) -> str:
    return (SPECS / name).read_text()


def planned(text: str, slug: str = "") -> ProjectPlan:
    plan = read_spec(text, slug)
    assert isinstance(plan, ProjectPlan), plan.text if isinstance(plan, Refusal) else plan
    assert check_plan(plan) == []
    return plan


def refused(text: str) -> str:
    outcome = read_spec(text)
    assert isinstance(outcome, Refusal), outcome
    assert "nothing was changed" in outcome.text
    # says what format is expected, and where it is described
    assert 'agents/offline/README.md, "Plan mode: the spec format"' in outcome.text
    return outcome.text


# --------------------------------------------------------------------------- decomposition


def test_four_processes_become_four_workflows_with_their_steps() -> None:
    plan = planned(spec("four_processes.md"))
    by_key = plan.by_key()
    assert [w.key for w in plan.workflows] == [
        "intake",
        "coverage-check",
        "document-verification",
        "status-report",
    ]
    assert [w.name for w in plan.workflows] == [
        "Intake",
        "Coverage check",
        "Document verification",
        "Status report",
    ]
    assert by_key["intake"].steps == [
        "Fetch the referral from the portal over http",
        "Validate the required fields",
        "Save the referral",
    ]
    # The third-person line over the list is the purpose, never a step.
    assert by_key["intake"].purpose == "Takes in new referrals from the clinic portal."
    assert all(len(w.steps) == 3 for w in plan.workflows)
    assert plan.summary.startswith("Referral intake system as 4 workflows")
    assert "clinic portal" in plan.summary


def test_dependencies_triggers_and_contracts() -> None:
    plan = planned(spec("four_processes.md"), "referrals")
    by_key = plan.by_key()
    assert by_key["coverage-check"].depends_on == ["intake"]  # "After Intake."
    assert by_key["document-verification"].depends_on == ["intake"]  # "Uses Intake's result."
    assert by_key["intake"].depends_on == by_key["status-report"].depends_on == []
    assert by_key["status-report"].trigger.model_dump() == {
        "type": "cron",
        "cron_expression": "0 7 * * 1-5",
    }
    assert {w.trigger.type for k, w in by_key.items() if k != "status-report"} == {"webhook"}
    # Derived contracts: the dependents receive what Intake hands over.
    assert by_key["intake"].outputs == ["Intake result"]
    assert by_key["coverage-check"].inputs == ["Intake result"]
    found = [(c.source, c.target, c.data, c.webhook_path) for c in contracts(plan, "referrals")]
    assert found == [
        ("intake", "coverage-check", ["Intake result"], "referrals-coverage-check"),
        ("intake", "document-verification", ["Intake result"], "referrals-document-verification"),
    ]


def test_numbered_sections_explicit_contracts_and_leaf_first_order() -> None:
    plan = planned(spec("numbered_sections.md"))
    by_key = plan.by_key()
    # Result review is written first but depends on Result intake: the order puts it after.
    assert [w.key for w in plan.workflows][:2] == ["result-review", "result-intake"]
    assert plan.order == ["result-intake", "result-review", "district-upload", "weekly-summary"]
    assert by_key["result-review"].depends_on == ["result-intake"]  # "Depends on: ..."
    assert by_key["district-upload"].depends_on == ["result-review"]  # "Once ... is done."
    assert by_key["result-review"].inputs == ["lab result"]
    assert by_key["result-review"].outputs == ["reviewed result"]
    assert by_key["result-intake"].purpose == "Receive new lab results from the hospital."
    assert by_key["result-review"].steps == [
        "Check whether the result is complete",
        "Flag the result for review",
    ]
    assert by_key["weekly-summary"].trigger.cron_expression == "0 9 * * 1"
    assert [(c.source, c.target, c.data) for c in contracts(plan)] == [
        ("result-intake", "result-review", ["lab result"]),
        ("result-review", "district-upload", ["reviewed result"]),
    ]
    assert plan.summary.startswith("Lab results pipeline as 4 workflows")


def test_heading_notes_say_dependencies_and_schedules() -> None:
    plan = planned(spec("heading_notes.md"))
    by_key = plan.by_key()
    assert list(by_key) == ["registration", "eligibility", "welcome-pack", "nightly-audit"]
    assert by_key["eligibility"].name == "Eligibility"  # the note is not part of the name
    assert by_key["eligibility"].depends_on == ["registration"]
    assert by_key["welcome-pack"].depends_on == ["eligibility"]
    assert by_key["nightly-audit"].trigger.cron_expression == "0 23 * * *"
    assert by_key["eligibility"].outputs == ["Eligibility result"]
    assert by_key["registration"].purpose == "Register a new patient from the clinic form."
    # No description: the first step is the purpose.
    assert by_key["welcome-pack"].purpose == "Generate the welcome letter."


def test_prose_sections_wrapped_lines_and_five_processes() -> None:
    plan = planned(spec("prose_sections.md"))
    by_key = plan.by_key()
    intake = by_key["referral-intake"]
    assert intake.purpose == "Receives referrals sent by partner clinics."
    # A sentence wrapped over two lines is one step.
    assert intake.steps == [
        "Fetch the referral from the clinic portal over http",
        "Save the referral",
    ]
    assert by_key["provider-validation"].steps[1] == "Check whether the provider licence is valid"
    assert by_key["provider-validation"].depends_on == ["referral-intake"]
    assert by_key["status-transitions"].outputs == ["referral status"]
    assert by_key["closure"].name == "Closure"
    assert by_key["closure"].depends_on == ["status-transitions"]
    assert by_key["closure"].inputs == ["referral status"]  # what Status transitions outputs
    assert by_key["monthly-audit"].trigger.cron_expression == "0 6 1 * *"
    assert plan.order == [
        "referral-intake",
        "provider-validation",
        "status-transitions",
        "closure",
        "monthly-audit",
    ]


def test_brackets_that_say_nothing_of_when_stay_in_the_name() -> None:
    plan = planned("## Intake (v2)\n- Save it\n\n## Report\n- Send it\n")
    # Named as the built workflow will be (a name holds letters, digits, " ", "_", "-").
    assert plan.workflows[0].name == "Intake v2"
    assert plan.workflows[0].key == "intake-v2"


def test_uses_a_named_piece_of_data_and_several_dependencies() -> None:
    plan = planned(
        "## Intake\n- Fetch the referral over http\n\n"
        "## Coverage\n- Check the coverage\n\n"
        "## Decision\nDepends on: Intake and Coverage.\nUses the referral from Intake.\n"
        "- Record the decision\n"
    )
    decision = plan.by_key()["decision"]
    assert decision.depends_on == ["intake", "coverage"]
    assert decision.inputs == ["Intake result", "Coverage result", "referral"]
    assert plan.by_key()["intake"].outputs == ["Intake result", "referral"]


def test_a_dependency_and_a_step_in_one_sentence_and_a_leading_schedule() -> None:
    plan = planned(
        "## Intake\nSave the referral.\n\n"
        "## Follow-up\nAfter Intake, email the coordinator.\n\n"
        "## Digest\nEvery Monday at 9, fetch the open referrals over http. Summarise them.\n"
    )
    by_key = plan.by_key()
    assert by_key["follow-up"].depends_on == ["intake"]
    assert by_key["follow-up"].steps == ["email the coordinator"]
    assert by_key["digest"].trigger.cron_expression == "0 9 * * 1"
    assert by_key["digest"].steps == ["fetch the open referrals over http", "Summarise them"]
    # "After that, ..." names no section: it is a step as said.
    plan = planned("## A\n- Save it\n\n## B\n- Fetch it\n- After that, save it\n")
    assert plan.by_key()["b"].steps == ["Fetch it", "After that, save it"]
    assert plan.by_key()["b"].depends_on == []


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize(
    ("heading", "key"),
    [
        ("Coverage check", "coverage-check"),
        ("2. Coverage check:", "coverage-check"),
        ("Process 3: Coverage check", "coverage-check"),
        ("Provider's validation & sign-off!", "provider-validation-sign-off"),
        ("2024 Reports", "reports"),
        (
            "Very long heading that goes on about the status transitions of referrals",
            "very-long-heading-that-goes-on-about-the",
        ),
    ],
)
def test_keys_are_slugs_of_the_heading(heading: str, key: str) -> None:
    plan = planned(f"## {heading}\n- Fetch it over http\n\n## Other\n- Save it\n")
    assert plan.workflows[0].key == key
    assert len(key) <= 40


@pytest.mark.parametrize(
    ("heading", "workflow_key", "job_key", "job_key_fits"),
    [
        # Where a plain name gives the same key as a job's...
        ("Coverage check", "coverage-check", "coverage-check", True),
        ("Intake (v2)", "intake-v2", "intake-v2", True),
        ("Überprüfung der Daten", "uberprufung-der-daten", "uberprufung-der-daten", True),
        # ...and where a workflow key has rules of its own: a possessive loses its "s" (as
        # a reference to the heading is read); a letter first, at most 40 characters cut at
        # a word, never empty.
        ("Provider's check", "provider-check", "provider-s-check", True),
        ("2024 Reports", "reports", "2024-reports", False),
        (
            "Status transitions of the referrals that come in from clinics",
            "status-transitions-of-the-referrals-that",
            "status-transitions-of-the-referrals-that-come-in-from-clinics",
            False,
        ),
        ("🙂", "workflow", "", False),
    ],
)
def test_workflow_keys_differ_from_job_keys(
    heading: str, workflow_key: str, job_key: str, job_key_fits: bool
) -> None:
    assert spec_layout.slug(heading) == workflow_key
    assert derive_key(heading) == job_key
    assert re.fullmatch(KEY_PATTERN, workflow_key)
    # Why derive_key alone would not do: a plan could not hold some of its answers.
    assert bool(re.fullmatch(KEY_PATTERN, job_key)) is job_key_fits
    plan = planned(f"## {heading}\n- Fetch it over http\n\n## Other\n- Save it\n")
    assert plan.workflows[0].key == workflow_key


def test_same_heading_keeps_its_key_so_the_delta_is_precise() -> None:
    before = planned(spec("four_processes.md"))
    text = (
        spec("four_processes.md")
        .replace(
            "## Coverage check",
            "## Provider validation\n- Check the provider licence over http\n\n## Coverage check",
        )
        .replace("- Save the referral", "- Save the referral\n- Email the coordinator")
    )
    after = planned(text)
    delta = plan_delta(before, after)
    assert delta.added == ["provider-validation"]
    assert [(c.key, c.fields) for c in delta.changed] == [("intake", ["steps"])]
    assert delta.removed == []
    assert set(delta.unchanged) == {"coverage-check", "document-verification", "status-report"}


def test_headings_that_slug_alike_get_distinct_keys() -> None:
    long = "Status transitions of the referrals that come in from"
    plan = planned(f"## {long} clinics\n- Save it\n\n## {long} hospitals\n- Fetch it\n")
    keys = [w.key for w in plan.workflows]
    assert keys == [
        "status-transitions-of-the-referrals-that",
        "status-transitions-of-the-referrals-2",
    ]


# --------------------------------------------------------------------------- refusals


def test_a_title_over_prose_is_refused_with_what_was_understood() -> None:
    text = refused(
        "# Referral intake system\n\nWe receive referrals from clinics and check coverage, "
        "then verify documents and tell the team every morning."
    )
    assert 'the title "Referral intake system"' in text
    assert "1 line of text in no section" in text
    assert "no process sections" in text


@pytest.mark.parametrize(
    "body",
    [
        "1. Fetch the referral over http\n2. Check the coverage\n3. Save it",  # one workflow
        "Fetch the referral, check the coverage and save it.",
        "",
    ],
)
def test_texts_that_are_not_several_processes_are_refused(body: str) -> None:
    assert "a plan needs at least two" in refused(body)


def test_one_section_is_refused() -> None:
    text = refused("# Referrals\n\n## Intake\n- Save the referral\n")
    assert 'the section "Intake" (1 step)' in text
    assert "one process section" in text


def test_an_unknown_dependency_is_refused_naming_it() -> None:
    text = refused(
        "## Intake\n- Save the referral\n\n## Coverage check\nAfter Triage.\n- Check it\n"
    )
    assert '"Coverage check" depends on "Triage", but no section is called that' in text
    text = refused("## Intake\n- Save it\n\n## Coverage\nUses Triage's result.\n- Check it\n")
    assert '"Triage"' in text


def test_a_cycle_is_refused_naming_it() -> None:
    text = refused(
        "## Intake\nAfter Coverage.\n- Save it\n\n## Coverage\nAfter Intake.\n- Check it\n"
    )
    assert "The dependencies go round: intake -> coverage -> intake" in text


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("## Intake\n- Save it\n\n## Coverage\nAfter Intake.\n", '"Coverage" has no steps'),
        ("## Intake\n- Save it\n\n## Intake\n- Check it\n", 'Two sections are called "Intake"'),
        (
            "## Intake\n- Save it\n\n## Report\n- Fetch the cases every day at 7\n",
            "has a schedule inside a step",
        ),
        (
            "## Intake\n- Save it\n\n## Report\nAfter Intake.\nEvery day at 7.\n- Fetch it\n",
            "its trigger must be a webhook",
        ),
        ("## Intake\n- Save it\n\n## Report\nSchedule: whenever\n- Fetch it\n", "the trigger"),
        ("- Fetch it\n## Intake\n- Save it\n\n## Report\n- Send it\n", "before the first section"),
        ("## A\nEvery day at 7. Every Monday at 9.\n- Go\n\n## B\n- Save it\n", "two different"),
    ],
)
def test_structures_with_a_flaw_are_refused(body: str, says: str) -> None:
    assert says in refused(body)


@pytest.mark.parametrize(
    ("line", "cron"),
    [
        ("Every day at 7.", "0 7 * * *"),
        ("Runs each Monday at 9.", "0 9 * * 1"),
        ("Schedule: weekdays at 7", "0 7 * * 1-5"),
        ("Trigger: every 15 minutes", "*/15 * * * *"),
        ("It runs on the first of the month.", "0 0 1 * *"),
    ],
)
def test_schedule_lines(line: str, cron: str) -> None:
    plan = planned(f"## Intake\n- Save it\n\n## Report\n{line}\n- Fetch the cases over http\n")
    report = plan.by_key()["report"]
    assert report.trigger.cron_expression == cron
    assert report.steps == ["Fetch the cases over http"]


def test_the_readme_example_is_the_four_process_spec() -> None:
    readme = (Path(__file__).parents[3] / "agents" / "offline" / "README.md").read_text()
    section = readme.split("## Plan mode: the spec format", 1)[1]
    example = section.split("```markdown\n", 1)[1].split("```", 1)[0]
    assert example == spec("four_processes.md")


def test_a_list_item_of_two_sentences_is_two_steps() -> None:
    plan = planned("## A\n- Fetch it over http. Save it.\n\n## B\n- Send it\n")
    assert plan.workflows[0].steps == ["Fetch it over http", "Save it"]


def test_a_workflow_renamed_by_feedback_keeps_its_key_in_the_next_spec() -> None:
    before = planned(spec("four_processes.md"))
    renamed = revise_plan(before, "rename Coverage check to Eligibility check")
    assert isinstance(renamed, ProjectPlan)
    text = spec("four_processes.md").replace("## Coverage check", "## Eligibility check")
    assert planned(text).by_key().get("eligibility-check") is not None  # no plan: the slug
    after = read_spec(text, known=renamed)
    assert isinstance(after, ProjectPlan)
    assert after.by_key()["coverage-check"].name == "Eligibility check"
    assert plan_delta(renamed, after).empty


@pytest.mark.parametrize(
    "line", ["When a referral arrives.", "Trigger: when a referral arrives", "Runs on a webhook."]
)
def test_webhook_lines(line: str) -> None:
    plan = planned(f"## Intake\n{line}\n- Save the referral\n\n## Report\n- Send it\n")
    intake = plan.by_key()["intake"]
    assert intake.trigger.type == "webhook"
    assert intake.steps == ["Save the referral"]


def test_step_markers_and_a_schedule_before_a_step_without_a_comma() -> None:
    plan = planned(
        "## Intake\nStep 1: Fetch the referral over http\nStep 2: Save it\n\n"
        "## Report\nEvery Friday at 4pm send the weekly report over http.\n"
    )
    assert plan.by_key()["intake"].steps == ["Fetch the referral over http", "Save it"]
    report = plan.by_key()["report"]
    assert report.trigger.cron_expression == "0 16 * * 5"
    assert report.steps == ["send the weekly report over http"]


@pytest.mark.parametrize(
    "text",
    [
        "Intake:\n- Save the referral\n\nCoverage check:\nAfter Intake.\n- Check the coverage\n",
        "**Intake**\n- Save the referral\n**Coverage check**\nAfter Intake.\n- Check coverage\n",
    ],
)
def test_name_lines_are_sections_in_a_text_without_headings(text: str) -> None:
    plan = planned(text)
    assert [w.key for w in plan.workflows] == ["intake", "coverage-check"]
    assert plan.by_key()["coverage-check"].depends_on == ["intake"]


def test_a_single_list_under_a_name_line_is_one_process_and_refused() -> None:
    assert "one process section" in refused("Our process:\n- Fetch it\n- Save it\n")


@pytest.mark.parametrize(
    "line",
    [
        "After Intake.",
        "Runs after Intake has finished.",
        "Only after the Intake workflow is done.",
        "Once intake is done.",
        "Depends on Intake.",
        "Depends on: intake",
        "Uses the results of Intake.",
        "Uses Intake’s output.",
        "This workflow uses the Intake result.",
    ],
)
def test_dependency_lines(line: str) -> None:
    plan = planned(f"## Intake\n- Save the referral\n\n## Coverage\n{line}\n- Check it\n")
    coverage = plan.by_key()["coverage"]
    assert coverage.depends_on == ["intake"]
    assert coverage.steps == ["Check it"]


def test_uses_lines_that_name_no_section() -> None:
    # An imperative is a step; a statement that names a result must name a section.
    plan = planned("## A\n- Save it\n\n## B\nUse the API result.\nUse the token from the config.\n")
    assert plan.by_key()["b"].steps == ["Use the API result", "Use the token from the config"]
    assert '"B" depends on "API"' in refused(
        "## A\n- Save it\n\n## B\nUses the API result.\n- Go\n"
    )


def test_lists_of_dependencies_and_labelled_lines_of_several_sentences() -> None:
    plan = planned(
        "## Intake\n- Save it\n\n## Coverage\n- Check it\n\n"
        "## Decision\nPurpose: Decide. Then tell the clinic.\nAfter Intake, Coverage.\n"
        "Steps: Record the decision. Email the clinic.\n"
    )
    decision = plan.by_key()["decision"]
    assert decision.depends_on == ["intake", "coverage"]
    assert decision.purpose == "Decide. Then tell the clinic."
    assert decision.steps == ["Record the decision", "Email the clinic"]
    plan = planned("## A\n- Save it\n\n## B\n- Go\n\n## C\nDepends on A, B.\n- Send it\n")
    assert plan.by_key()["c"].depends_on == ["a", "b"]


def test_a_known_name_with_punctuation_keeps_its_key() -> None:
    text = "## Provider's check!\n- Check it\n\n## Report\n- Send it\n"
    first = planned(text)
    assert first.workflows[0].name == "Provider check"  # no broken possessive ("Provider s")
    # The project was built with another key for it (e.g. renamed since, then back).
    workflows = [first.workflows[0].model_copy(update={"key": "vetting"}), first.workflows[1]]
    built = first.model_copy(update={"workflows": workflows, "order": ["vetting", "report"]})
    again = read_spec(text, known=built)
    assert isinstance(again, ProjectPlan)
    assert [w.key for w in again.workflows] == ["vetting", "report"]
