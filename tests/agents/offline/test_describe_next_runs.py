"""The offline model's ``describe`` answer says when a cron trigger runs next."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.agents.offline.documents import DOCS
from tests.agents.offline.harness import run_turn
from tools.document import cron


def test_describe_lists_the_cron_triggers_next_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cron, "clock", lambda: datetime(2026, 12, 4, 15, 30, tzinfo=UTC))
    outcome = run_turn(DOCS["chain"](), "what does this workflow do?")  # cron 0 9 * * *
    assert outcome.tool_calls == []
    assert "Next runs: Sat 5 Dec 09:00, Sun 6 Dec 09:00 and Mon 7 Dec 09:00 UTC." in (
        outcome.final_text
    )


def test_describe_of_a_webhook_workflow_names_no_runs() -> None:
    outcome = run_turn(DOCS["referral"](), "what does this workflow do?")
    assert "Trigger: a webhook" in outcome.final_text
    assert "Next runs" not in outcome.final_text
