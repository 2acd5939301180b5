"""Building scenarios and outcomes by hand, for grader tests."""

from __future__ import annotations

from typing import Any

from evals.execute import RunOutcome, TurnOutcome
from evals.scenario import FIXTURES_DIR, Scenario
from tests.fixtures import fixture_text
from tools.document import WorkflowDocument
from tools.registry import run_tool

REFERRAL = (FIXTURES_DIR / "referral_intake.yaml").read_text(encoding="utf-8")
DIGEST = (FIXTURES_DIR / "daily_digest.yaml").read_text(encoding="utf-8")
BROKEN = (FIXTURES_DIR / "broken.yaml").read_text(encoding="utf-8")


def scenario(expect: dict[str, Any] | None = None, **fields: Any) -> Scenario:
    data: dict[str, Any] = {
        "id": "test",
        "category": "add_specific",
        "description": "a test scenario",
        "turns": [{"content": "do it"}],
        "expect": expect or {},
    }
    data.update(fields)
    return Scenario.model_validate(data)


def edited(yaml: str, *calls: tuple[str, dict[str, Any]]) -> str:
    """``yaml`` after running ``calls`` through the real tools (each must succeed)."""
    doc = WorkflowDocument.from_yaml(yaml)
    for name, args in calls:
        result = run_tool(doc, name, args)
        assert result.ok, result.text
    return doc.to_yaml()


def outcome(
    before: str,
    after: str | None = None,
    *,
    reply: str = "",
    mutations: int | None = None,
    confirmations: list[str] | None = None,
    approved: bool | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    tool_rounds: int = 0,
    tokens: tuple[int, int] = (0, 0),
    route: str = "planner",
    error: str | None = None,
) -> RunOutcome:
    after = before if after is None else after
    changed = after != before
    events: list[dict[str, Any]] = [{"type": "route", "destination": route}]
    events += [{"type": "workflow"}] * (mutations if mutations is not None else int(changed))
    turn = TurnOutcome(
        content="do it",
        before_yaml=before,
        after_yaml=after,
        reply=reply,
        events=events,
        confirmations=confirmations or [],
        approved=approved,
        tool_rounds=tool_rounds,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        tool_calls=tool_calls or [],
        error=error,
    )
    return RunOutcome("test", "scripted", before, after, [turn], latency_ms=5, error=error)


SECRET_KEY = "sk-lf-test-secret-0123456789"


# One common-adaptor step behind a disabled webhook: runs in OpenFn without credentials.
COMMON_ONLY = fixture_text("common_only.yaml")
