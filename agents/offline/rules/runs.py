"""Test runs and "fix it", tried on the whole message (a sample may span lines)."""

from __future__ import annotations

import re

from agents.offline import runs
from agents.offline.plan import Outcome
from agents.offline.rules.base import Example, Rule, Turn


def _test_run(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return runs.test_request(text)


def _fix(turn: Turn, text: str, match: re.Match[str] | None) -> Outcome | None:
    return runs.fix_request(text)


RULES = [
    Rule(
        "test_run",
        "other",
        "message",
        _test_run,
        (),
        (
            Example(
                'test it with {"plan": "HMO", "patientId": "p-1"}',
                "`test_run` with that sample as the run's data (an object with `data` is the "
                "whole initial state); the answer is the run's summary",
                ("test_run",),
                also=(
                    'try it on {"data": {"plan": "PPO"}}',
                    'do a test run with {"patientId": "p-2"}',
                    'see if the workflow works with {"plan": "HMO"}',
                ),
                menu="test it with {...}",
            ),
            Example(
                "run it",
                "`test_run` with no input",
                ("test_run",),
                also=("test the workflow", "give it a try", "run the workflow once more"),
                menu="run it",
            ),
            Example(
                "test it with {plan: HMO}",
                "says the sample is not valid JSON (or not an object) and runs nothing",
                says=("JSON", "nothing was run"),
                also=('try it on ["HMO"]',),
            ),
        ),
    ),
    Rule(
        "fix",
        "other",
        "message",
        _fix,
        (),
        (
            Example(
                "fix it",
                "with the editor's errors or a failed test run in the session: errors mode "
                "(below); with neither, says there is nothing to fix",
                also=("fix the failed run", "make it work"),
                says=("nothing to fix",),
                menu="fix it",
            ),
        ),
    ),
]
