"""The offline model's ``describe`` answer says when a cron trigger runs next, counted from
the time its request carries (the turn's clock); a request without one says no runs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.models.base import RequestContext
from agents.offline.plan import Reply
from agents.offline.planner import plan
from agents.offline.summary import final_text
from agents.offline.view import View
from tests.agents.offline.documents import DOCS
from tests.agents.offline.harness import run_turn
from tools.document.redaction import redact

FRIDAY_AFTERNOON = datetime(2026, 12, 4, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "runs"),
    [
        (FRIDAY_AFTERNOON, "Sat 5 Dec 09:00, Sun 6 Dec 09:00 and Mon 7 Dec 09:00 UTC"),
        (
            datetime(2026, 12, 4, 8, 0, tzinfo=UTC),
            "Fri 4 Dec 09:00, Sat 5 Dec 09:00 and Sun 6 Dec 09:00 UTC",
        ),
    ],
)
def test_describe_lists_the_cron_triggers_next_runs_from_the_turns_clock(
    now: datetime, runs: str
) -> None:
    outcome = run_turn(DOCS["chain"](), "what does this workflow do?", now=now)  # 0 9 * * *
    assert outcome.tool_calls == []
    assert f"Next runs: {runs}." in outcome.final_text


def test_describe_of_a_webhook_workflow_names_no_runs() -> None:
    outcome = run_turn(DOCS["referral"](), "what does this workflow do?")
    assert "Trigger: a webhook" in outcome.final_text
    assert "Next runs" not in outcome.final_text


def test_a_request_that_carries_no_time_describes_the_trigger_without_runs() -> None:
    structure = redact(DOCS["chain"]().structure)
    answer = plan(RequestContext(user_text="describe this workflow", structure=structure))
    assert isinstance(answer, Reply)
    trigger = 'Trigger: a schedule (every day at 09:00), enabled, starting "Fetch patients".'
    assert f"{trigger}\n" in answer.text
    assert "Next runs" not in answer.text


def test_a_created_workflows_chart_counts_its_next_runs_from_the_request() -> None:
    view = View(redact(DOCS["chain"]().structure))
    rounds = [[("create_workflow", {"name": "Patient sync"}, "Created the workflow.", False)]]
    said = final_text(rounds, view, FRIDAY_AFTERNOON)
    assert said.startswith('Created the workflow "Patient sync":')
    assert "Next runs: Sat 5 Dec 09:00, Sun 6 Dec 09:00 and Mon 7 Dec 09:00 UTC." in said
    assert "Next runs" not in final_text(rounds, view, None)
