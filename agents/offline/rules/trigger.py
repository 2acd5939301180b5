"""Trigger commands (:mod:`agents.offline.schedule`): a schedule in plain
words becomes a cron trigger; "use a webhook"; enabling and disabling."""

from __future__ import annotations

import re

from agents.offline.plan import Outcome
from agents.offline.rules.base import Example, Rule, Turn
from agents.offline.schedule import parse_trigger_command


def _trigger(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return parse_trigger_command(text, turn.view)


def _cron(text: str, cron: str, menu: str = "", doc: str = "referral") -> Example:
    return Example(text, f"cron `{cron}`", ("set_trigger",), doc=doc, cron=cron, menu=menu)


RULES = [
    Rule(
        "trigger",
        "trigger",
        "command",
        _trigger,
        (),
        (
            _cron("run it every day at 9", "0 9 * * *", menu="run it every day at 9"),
            _cron("schedule it for weekdays at 7:30", "30 7 * * 1-5", menu="weekdays at 7:30"),
            _cron("run it every 15 minutes", "*/15 * * * *", menu="every 15 minutes"),
            _cron("make it run hourly", "0 * * * *"),
            _cron("run it every 2 hours", "0 */2 * * *"),
            _cron("change the schedule to on the first of the month at 6", "0 6 1 * *"),
            _cron("run it every monday at 8am", "0 8 * * 1"),
            _cron("run it mondays and thursdays at 5:15 pm", "15 17 * * 1,4"),
            _cron("run it every night at 11", "0 23 * * *"),
            _cron("run it at noon every day", "0 12 * * *"),
            _cron("run it every day at half past seven", "30 7 * * *"),
            _cron("run it on weekends at 10", "0 10 * * 0,6"),
            _cron("cron 5 4 * * 0", "5 4 * * 0"),
            Example(
                "use a webhook",
                "`set_trigger` webhook",
                ("set_trigger",),
                doc="chain",
                menu="use a webhook",
            ),
            Example(
                "enable the trigger",
                "`set_trigger` enabled",
                ("set_trigger",),
                also=("turn on the schedule",),
                menu="enable the trigger",
            ),
            Example(
                "pause the schedule",
                "`set_trigger` disabled",
                ("set_trigger",),
                also=("disable the trigger",),
                doc="chain",
            ),
            Example(
                "run it every day at 9, and enable it",
                "both: cron `0 9 * * *`, enabled",
                ("set_trigger",),
                cron="0 9 * * *",
            ),
        ),
    ),
]
