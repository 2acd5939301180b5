"""Budget: tool rounds and tokens within the scenario's limits."""

from __future__ import annotations

from evals.execute import RunOutcome
from evals.graders.base import GradeResult
from evals.scenario import Scenario


def within_budget(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    expect = scenario.expect
    if expect.max_tool_rounds is None and expect.max_tokens is None:
        return None
    problems: list[str] = []
    parts: list[str] = []
    if expect.max_tool_rounds is not None:
        parts.append(f"{outcome.tool_rounds}/{expect.max_tool_rounds} rounds")
        if outcome.tool_rounds > expect.max_tool_rounds:
            problems.append(f"{outcome.tool_rounds} tool rounds > {expect.max_tool_rounds}")
    if expect.max_tokens is not None:
        parts.append(f"{outcome.tokens}/{expect.max_tokens} tokens")
        if outcome.tokens > expect.max_tokens:
            problems.append(f"{outcome.tokens} tokens > {expect.max_tokens}")
    if problems:
        return GradeResult.fail("budget", "; ".join(problems))
    return GradeResult.ok("budget", ", ".join(parts))
