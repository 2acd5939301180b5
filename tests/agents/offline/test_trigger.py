"""The offline model through the turn harness.

Triggers and schedules in plain words.
"""

from __future__ import annotations

import pytest

from agents.offline.rules import Example, Rule
from agents.offline.rules import trigger as trigger_rules
from agents.offline.schedule import find_schedule
from tests.agents.offline.cases import (
    Case,
    check_case,
    check_example,
    check_read_only,
    example_params,
)
from tests.agents.offline.documents import (
    REFERRAL_EDGES,
    edges_with,
)

CASES = [
    # --- triggers and schedules --------------------------------------------------------
    Case(
        "schedule-every-day-at-9",
        "referral",
        "run it every day at 9",
        calls=(("set_trigger", {"type": "cron", "cron_expression": "0 9 * * *"}),),
        trigger=("cron", "0 9 * * *", False),
        edges=edges_with(REFERRAL_EDGES, webhook__get_referrals=None, cron__get_referrals="always"),
    ),
    Case(
        "schedule-weekdays-at-730",
        "referral",
        "schedule it for weekdays at 7:30",
        trigger=("cron", "30 7 * * 1-5", False),
    ),
    Case(
        "schedule-every-15-minutes",
        "referral",
        "every 15 minutes",
        trigger=("cron", "*/15 * * * *", False),
    ),
    Case("schedule-hourly", "chain", "make it run hourly", trigger=("cron", "0 * * * *", True)),
    Case(
        "schedule-first-of-month",
        "chain",
        "change the schedule to on the first of the month at 6",
        trigger=("cron", "0 6 1 * *", True),
    ),
    Case(
        "schedule-every-monday",
        "chain",
        "run it every monday at 8am",
        trigger=("cron", "0 8 * * 1", True),
    ),
    Case(
        "schedule-and-enable",
        "referral",
        "change the trigger to every 2 hours and enable it",
        calls=(
            (
                "set_trigger",
                {"type": "cron", "cron_expression": "0 */2 * * *", "enabled": True},
            ),
        ),
        trigger=("cron", "0 */2 * * *", True),
    ),
    Case(
        "use-a-webhook",
        "chain",
        "use a webhook",
        calls=(("set_trigger", {"type": "webhook"}),),
        trigger=("webhook", None, True),
    ),
    Case(
        "enable-trigger",
        "referral",
        "enable the trigger",
        calls=(("set_trigger", {"type": "webhook", "enabled": True}),),
        trigger=("webhook", None, True),
    ),
    Case(
        "disable-schedule",
        "chain",
        "pause the schedule",
        trigger=("cron", "0 9 * * *", False),
    ),
    Case(
        "enable-already-enabled-explains",
        "chain",
        "turn on the trigger",
        calls=(),
        unchanged=True,
        says=("already enabled",),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_phrasing(case: Case) -> None:
    check_case(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_read_only_never_emits_mutating_tools(case: Case) -> None:
    check_read_only(case)


@pytest.mark.parametrize(("rule", "example", "text"), example_params(trigger_rules.RULES))
def test_rule_examples(rule: Rule, example: Example, text: str) -> None:
    check_example(rule, example, text)


@pytest.mark.parametrize(
    ("phrase", "cron"),
    [
        ("every day at 9", "0 9 * * *"),
        ("weekdays at 7:30", "30 7 * * 1-5"),
        ("every 15 minutes", "*/15 * * * *"),
        ("hourly", "0 * * * *"),
        ("on the first of the month", "0 0 1 * *"),
        ("every monday at 8am", "0 8 * * 1"),
        ("every weekday at 7", "0 7 * * 1-5"),
        ("mondays and thursdays at 5:15 pm", "15 17 * * 1,4"),
        ("every night at 11", "0 23 * * *"),
        ("at noon every day", "0 12 * * *"),
        ("on weekends at 10", "0 10 * * 0,6"),
        ("cron 5 4 * * 0", "5 4 * * 0"),
    ],
)
def test_schedule_phrases(phrase: str, cron: str) -> None:
    schedule = find_schedule(phrase)
    assert schedule is not None and schedule.cron == cron
