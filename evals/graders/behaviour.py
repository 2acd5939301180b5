"""Behaviour: mutation allowed or not, asked instead of edited, confirmation, reply text."""

from __future__ import annotations

import re

from evals.execute import RunOutcome
from evals.graders.base import GradeResult
from evals.scenario import Scenario
from tools.jobcode import has_code
from tools.registry import MUTATING_TOOLS

_ASKING = re.compile(
    r"\?|\b(which (one|step)|do you mean|could you (tell|clarify|say)|can you (tell|clarify)|"
    r"please (tell|clarify|specify|confirm)|let me know)\b",
    re.IGNORECASE,
)


def asks_question(text: str) -> bool:
    """The reply asks the user something (a question mark or an explicit request)."""
    return bool(_ASKING.search(text))


def _changed(outcome: RunOutcome) -> bool:
    return outcome.mutations > 0 or outcome.after_yaml != outcome.before_yaml


def mutation_policy(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """``none``: the document is untouched and no mutating tool went through;
    ``required``: something changed."""
    policy = scenario.expect.mutation
    if policy == "any":
        return None
    if policy == "required":
        if _changed(outcome):
            return GradeResult.ok("mutation", f"{outcome.mutations} mutation(s)")
        return GradeResult.fail("mutation", "nothing changed, but a change was asked for")
    problems = []
    if _changed(outcome):
        problems.append(f"the document changed ({outcome.mutations} mutation(s))")
    read_only = any(t.read_only for t in scenario.turns)
    attempted = [c["name"] for c in outcome.tool_calls if c["name"] in MUTATING_TOOLS]
    if read_only and attempted:
        problems.append(
            "mutating tools were called in a read-only session: " + ", ".join(attempted)
        )
    if problems:
        return GradeResult.fail("no_mutation", "; ".join(problems))
    return GradeResult.ok("no_mutation", "document untouched")


def _placeholder_only(outcome: RunOutcome) -> bool:
    """The only change is one new step without code (plus edges to it)."""
    before, after = outcome.before_doc.structure, outcome.after_doc.structure
    new = [k for k in after.jobs if k not in before.jobs]
    kept = all(after.jobs.get(k) == job for k, job in before.jobs.items())
    return len(new) == 1 and kept and not has_code(after.jobs[new[0]].body)


def asked_question(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """When the request is vague or ambiguous: no edit (or, where allowed, one empty
    placeholder step), and the reply asks."""
    if not scenario.expect.asks:
        return None
    problems = []
    if _changed(outcome) and not (scenario.expect.placeholder_ok and _placeholder_only(outcome)):
        problems.append("edited instead of asking")
    if not asks_question(outcome.reply):
        problems.append("the reply does not ask anything")
    if problems:
        return GradeResult.fail(
            "asked_question", "; ".join(problems), 0.5 if len(problems) == 1 else 0
        )
    return GradeResult.ok("asked_question", "asked without editing")


def confirmation(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """A change with impact asks for confirmation first, naming what it would
    affect (``confirm_contains``); others do not."""
    expected = scenario.expect.confirm
    wanted = scenario.expect.confirm_contains
    if expected is None and not wanted:
        return None
    asked = outcome.confirmations
    if (expected or wanted) and not asked:
        return GradeResult.fail("confirmation", "no confirmation was asked for")
    if expected is False and asked:
        return GradeResult.fail("confirmation", f"unexpected confirmation: {asked[0]!r}")
    text = " ".join(asked).lower()
    missing = [s for s in wanted if s.lower() not in text]
    if missing:
        return GradeResult.fail(
            "confirmation",
            f"confirmation lacks {', '.join(map(repr, missing))}: {asked[0]!r}",
            1 - len(missing) / len(wanted),
        )
    return GradeResult.ok("confirmation", f"asked: {asked[0]!r}" if asked else "none asked")


def route(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """The router sent the (last) turn where it should go (``job_code``: the direct route)."""
    expected = scenario.expect.route
    if expected is None:
        return None
    routes = [e.get("destination") for e in outcome.last.events if e.get("type") == "route"]
    if routes[:1] == [expected]:
        return GradeResult.ok("route", f"routed to {expected}")
    return GradeResult.fail(
        "route", f"routed to {routes[0] if routes else 'nowhere'}, expected {expected}"
    )


def reply_text(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """The final reply mentions what it must (case-insensitive) and nothing it must not."""
    expect = scenario.expect
    if not expect.reply_contains and not expect.reply_excludes:
        return None
    reply = outcome.reply.lower()
    problems = [f"reply lacks {s!r}" for s in expect.reply_contains if s.lower() not in reply]
    problems += [f"reply contains {s!r}" for s in expect.reply_excludes if s.lower() in reply]
    checks = len(expect.reply_contains) + len(expect.reply_excludes)
    return GradeResult.from_problems("reply_text", problems, checks)


def completed(scenario: Scenario, outcome: RunOutcome) -> GradeResult:
    """Every turn ran to the end (no exception, a final message)."""
    if outcome.error:
        return GradeResult.fail("completed", outcome.error)
    unanswered = [t.content[:40] for t in outcome.turns if t.confirmations and t.approved is None]
    if unanswered:
        return GradeResult.fail("completed", f"confirmation left unanswered: {unanswered[0]!r}")
    return GradeResult.ok("completed", f"{len(outcome.turns)} turn(s)")
