"""Schedules in plain words, read into cron (the trigger cases are in data/trigger.yaml)."""

from __future__ import annotations

import pytest

from agents.offline.schedule import find_schedule


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
