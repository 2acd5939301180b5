"""Precise or silent: the offline model's plausibility check and the issue's inputs.

Each input below once built a wrong workflow without a word of warning; now it
builds the right one, or changes nothing and shows what it understood.
"""

from __future__ import annotations

import pytest

from agents.offline.layout import Sop, Step
from agents.offline.plausibility import check_build, name_problem, placement_problem
from agents.offline.sop import parse_sop
from tests.agents.offline.documents import DOCS
from tests.agents.offline.harness import run_turn


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("If whether value is is over 200 page", 'starts with "If"'),
        ("Because out-of-network Aetna referrals need different form", 'starts with "Because"'),
        ("Store whether value is is", 'repeats "is"'),
        ("Check referral queue and if queue is empty", 'contains "and if"'),
        # every word counts, not just the first one
        ("Text doctor if urgent", 'contains "if", which says when it runs'),
        ("Fetch patients from dhis2 except sundays", 'contains "except"'),
        ("Send result by email or sms", 'contains "or", which leaves a choice open'),
        ("Maybe check coverage", 'contains "Maybe"'),
        ("Do not send", 'contains "not", which says what not to do'),
        ("Import patients without transforming", 'contains "without"'),
        ("Fetch visits for each clinic", 'contains "for each", which repeats'),
        ("Retry fetching patients three times", 'contains "Retry"'),
        ("Go back to step 2", 'contains "Go back"'),
        ("Wait two days", "a run cannot wait"),
        ("Get referrals and at same time email coordinator", "happen at once"),
        ("Fetch patients using dhis2-prod credential", "names a credential"),
        ("At seven", 'starts with "At"'),
        ("Nothing", 'starts with "Nothing"'),
        ("Some test data", 'starts with "Some"'),
    ],
)
def test_fragment_names_are_named(name: str, problem: str) -> None:
    why = name_problem(name)
    assert why is not None and problem in why


@pytest.mark.parametrize(
    "name",
    [
        "Check whether value is over 200",
        "Check if patient is eligible",
        "Page on-call doctor",
        "Post each patient",
        "Log and notify",
        "Notify no-show patients",
        "Archive last report",
    ],
)
def test_step_names_pass(name: str) -> None:
    assert name_problem(name) is None
    assert placement_problem(name) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Audit after the one", '"after"'),
        ("Log step at very end", '"very end"'),
        ("Authenticate as the very first", '"as the very first"'),
        ("Call patient first", '"first"'),
        ("Validate step and a Notify", "second step"),
        ("Dedupe referrals and", 'ends with "and"'),
    ],
)
def test_placement_words_left_in_a_name_are_named(name: str, problem: str) -> None:
    why = placement_problem(name)
    assert why is not None and problem in why


def test_unplaced_text_and_an_unused_named_adaptor_refuse_the_build() -> None:
    sop = Sop(items=[Step("Fetch referrals", "http")], unplaced=["for each clinic"])
    reply = check_build(
        sop, "fetch referrals over http, for each clinic, and text them with twilio"
    )
    assert reply is not None and reply.asks
    assert 'could not place "for each clinic"' in reply.text
    assert '"with twilio"' in reply.text and "twilio" in reply.text
    assert "1. Fetch referrals (http)" in reply.text  # what was understood, as a plan
    assert (
        check_build(Sop(items=[Step("Fetch referrals", "http")]), "fetch referrals over http")
        is None
    )


def test_a_step_naming_two_systems_is_asked_about() -> None:
    sop = parse_sop("every day at 10pm back up the referrals table from postgres to sftp")
    reply = check_build(sop, "back up the referrals table from postgres to sftp")
    assert reply is not None and "postgresql and sftp" in reply.text


def _built(text: str) -> dict[str, tuple[str, str]]:
    outcome = run_turn(DOCS["empty"](), text)
    return {k: (j.name, j.adaptor) for k, j in outcome.doc.structure.jobs.items()}


def test_the_lab_result_sentence_builds_clean_names() -> None:
    jobs = _built(
        "when a lab result arrives, parse it, check whether the value is over 200, if it is "
        "over 200 page the on-call doctor with twilio, otherwise store it in postgres"
    )
    names = sorted(name for name, _ in jobs.values())
    assert names == [
        "Check whether value is over 200",
        "Page on-call doctor",
        "Parse lab result",
        "Store lab result",
    ]
    assert all(name_problem(n) is None for n in names)


def test_the_explicit_adaptor_beats_the_inferred_one_and_possessives_read_well() -> None:
    jobs = _built(
        "First I pull up the referral from the EHR over http, then I check the patient's "
        "eligibility with fhir."
    )
    assert [(n, a.split("language-")[1].split("@")[0]) for n, a in jobs.values()] == [
        ("Pull up referral from EHR", "http"),
        ("Check patient eligibility", "fhir"),
    ]


def test_a_trigger_line_under_a_list_is_the_trigger_not_a_step() -> None:
    outcome = run_turn(
        DOCS["empty"](),
        "Referral intake\n1. Pull the referral from Epic\n2. Check the coverage\nTrigger: webhook",
    )
    structure = outcome.doc.structure
    assert [j.name for j in structure.jobs.values()] == [
        "Pull referral from Epic",
        "Check coverage",
    ]
    assert [t.type for t in structure.triggers.values()] == ["webhook"]
    assert structure.name == "Referral intake"


def test_an_add_with_a_fragment_name_changes_nothing() -> None:
    doc = DOCS["referral"]()
    before = doc.to_yaml()
    outcome = run_turn(doc, "add a step to check whether the value is is high after check coverage")
    assert outcome.doc.to_yaml() == before
    assert 'repeats "is"' in outcome.final_text and "changed nothing" in outcome.final_text


def test_the_plan_shown_names_the_otherwise_arm_as_the_build_would() -> None:
    """After a failure arm, "otherwise" is the success path: the plan says so."""
    from agents.offline.conditions import FAILURE
    from agents.offline.layout import Arm, Branch

    branch = Branch(
        [Arm(FAILURE, [Step("Alert lab team", "twilio")])], [Step("Store it", "common")]
    )
    sop = Sop(items=[Step("Parse lab result", "common"), branch], unplaced=["and so on"])
    reply = check_build(sop, "parse it, if it fails alert the lab team, otherwise store it")
    assert reply is not None
    assert "   - on failure: Alert lab team (twilio)" in reply.text
    assert "   - on success: Store it" in reply.text
