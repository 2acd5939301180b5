"""Plan-mode graders on what was proposed: decomposition, order, contracts, review, delta.

Each reads the plan turns of a plan scenario (``outcome.plan``) against the
turn's ``expect`` (``evals.plan_scenario.PlanTurnExpect``) and applies only where
the scenario expects something of its kind. The plan graded is a turn's last
proposal (after any feedback). Every comment names the turn (``turn 2: ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from evals.execute import RunOutcome
from evals.graders.base import GradeResult, norm
from evals.plan_execute import PlanTurnOutcome
from evals.plan_scenario import DeltaExpect, PlanTurnExpect, WorkflowExpect
from evals.scenario import Scenario
from tools.plan import PlanDelta, PlannedWorkflow, ProjectPlan, check_plan, plan_delta
from tools.plan.model import webhook_path

TurnCheck = Callable[[PlanTurnExpect, PlanTurnOutcome], "list[str] | None"]


def plan_turns(
    scenario: Scenario, outcome: RunOutcome
) -> Iterator[tuple[int, PlanTurnExpect, PlanTurnOutcome]]:
    """Each plan turn that ran, with what it must come to (1-based index)."""
    if scenario.plan is None or outcome.plan is None:
        return
    # A turn that raised ends the run early (``completed`` fails it): later turns never ran.
    ran = zip(scenario.plan.turns, outcome.plan.turns, strict=False)
    for index, (spec, done) in enumerate(ran, 1):
        yield index, spec.expect, done


def per_turn(
    name: str,
    scenario: Scenario,
    outcome: RunOutcome,
    check: TurnCheck,
    describe: Callable[[PlanTurnOutcome], str] | None = None,
) -> GradeResult | None:
    """Run ``check`` on every turn; ``None`` from it: nothing expected of that turn.
    A pass says what held, per turn, with ``describe``."""
    problems: list[str] = []
    held: list[str] = []
    checked = clean = 0
    for index, expect, done in plan_turns(scenario, outcome):
        found = check(expect, done)
        if found is None:
            continue
        checked += 1
        clean += not found
        problems += [f"turn {index}: {p}" for p in found]
        if describe is not None:
            held.append(f"turn {index}: {describe(done)}")
    if not checked:
        return None
    if problems:  # the score: the share of turns that held
        return GradeResult.fail(name, "; ".join(problems[:8]), round(clean / checked, 3))
    return GradeResult.ok(name, "; ".join(held) or f"{checked} turn(s) as expected")


def _keys(done: PlanTurnOutcome) -> str:
    plan = _plan(done)
    return ", ".join(w.key for w in plan.workflows) if plan else "no plan"


def _order_text(done: PlanTurnOutcome) -> str:
    plan = _plan(done)
    return " -> ".join(plan.order) if plan else "no plan"


def _contracts_text(done: PlanTurnOutcome) -> str:
    last = done.last_proposal
    pairs = [f"{c.source} -> {c.target}" for c in last.contracts] if last else []
    return ", ".join(pairs) or "no hand-offs"


def _delta_text(done: PlanTurnOutcome) -> str:
    last = done.last_proposal
    if last is None or last.delta is None:
        return "no delta"
    d = last.delta
    return f"added {d.added}, changed {[c.key for c in d.changed]}, removed {d.removed}"


def _review_text(done: PlanTurnOutcome) -> str:
    answers = ", ".join(done.answered) or "no answer"
    return f"{len(done.proposals)} proposal(s), answered {answers}"


def _plan(done: PlanTurnOutcome) -> ProjectPlan | None:
    last = done.last_proposal
    return last.plan if last is not None else None


def _workflow_problems(want: WorkflowExpect, got: PlannedWorkflow) -> list[str]:
    problems = []
    if want.name is not None and norm(want.name) != norm(got.name):
        problems.append(f"{got.key} is named {got.name!r}, expected {want.name!r}")
    if want.trigger is not None and got.trigger.type != want.trigger:
        problems.append(f"{got.key} starts on {got.trigger.type}, expected {want.trigger}")
    if want.cron_expression is not None and got.trigger.cron_expression != want.cron_expression:
        problems.append(
            f"{got.key} runs at {got.trigger.cron_expression!r}, expected {want.cron_expression!r}"
        )
    if want.depends_on is not None and sorted(got.depends_on) != sorted(want.depends_on):
        problems.append(f"{got.key} depends on {got.depends_on}, expected {want.depends_on}")
    if want.steps is not None and len(got.steps) != want.steps:
        problems.append(f"{got.key} has {len(got.steps)} step(s), expected {want.steps}")
    text = " | ".join(got.steps).lower()
    problems += [
        f"no step of {got.key} mentions {s!r}" for s in want.steps_contain if s.lower() not in text
    ]
    return problems


def _decomposition(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str] | None:
    if expect.workflows is None:
        return None
    plan = _plan(done)
    if plan is None:
        return ["no plan was proposed"]
    got = plan.by_key()
    wanted = [w.key for w in expect.workflows]
    problems = []
    missing = [k for k in wanted if k not in got]
    extra = [k for k in got if k not in wanted]
    if missing:
        problems.append("missing workflow(s) " + ", ".join(missing))
    if extra:
        problems.append("unexpected workflow(s) " + ", ".join(extra))
    for want in expect.workflows:
        if want.key in got:
            problems += _workflow_problems(want, got[want.key])
    return problems


def plan_decomposition(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """The plan has exactly the expected workflows (keys), with their names, triggers,
    dependencies and steps where given."""
    return per_turn("plan_decomposition", scenario, outcome, _decomposition, _keys)


def _order(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str] | None:
    plan = _plan(done)
    if expect.order is None and plan is None:
        return None
    if plan is None:
        return ["no plan was proposed"]
    problems = [p.message for p in check_plan(plan) if p.code.startswith("order")]
    if expect.order is not None and plan.order != expect.order:
        problems.append(f"order {' -> '.join(plan.order)}, expected {' -> '.join(expect.order)}")
    return problems


def plan_order(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """Every proposal's order is leaf-first (each workflow after those it depends on) and,
    where given, exactly the expected order."""
    return per_turn("plan_order", scenario, outcome, _order, _order_text)


def _contracts(slug: str) -> TurnCheck:
    def check(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str] | None:
        if expect.contracts is None:
            return None
        last = done.last_proposal
        if last is None:
            return ["no plan was proposed"]
        got = {(c.source, c.target): c for c in last.contracts}
        wanted = {(c.source, c.target): c for c in expect.contracts}
        problems = [f"no hand-off {s} -> {t}" for s, t in wanted if (s, t) not in got]
        problems += [f"unexpected hand-off {s} -> {t}" for s, t in got if (s, t) not in wanted]
        for pair, want in wanted.items():
            contract = got.get(pair)
            if contract is None:
                continue
            if want.data is not None and contract.data != want.data:
                problems.append(
                    f"{pair[0]} -> {pair[1]} hands {contract.data}, expected {want.data}"
                )
            path = webhook_path(slug, contract.target)
            if contract.webhook_path != path:
                problems.append(
                    f"{pair[0]} -> {pair[1]} goes to {contract.webhook_path!r}, expected {path!r}"
                )
        return problems

    return check


def plan_contracts(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """Exactly the expected source -> target hand-offs, with their data, each to the
    target's own webhook path."""
    slug = scenario.plan.slug if scenario.plan is not None else ""
    return per_turn("plan_contracts", scenario, outcome, _contracts(slug), _contracts_text)


def delta_problems(got: PlanDelta | None, want: DeltaExpect, what: str) -> list[str]:
    """``got`` is exactly ``want`` (fields of a change only where ``want`` names them)."""
    if got is None:
        return [f"no {what}"]
    problems = []
    if sorted(got.added) != sorted(want.added):
        problems.append(f"{what} adds {got.added}, expected {want.added}")
    if sorted(got.removed) != sorted(want.removed):
        problems.append(f"{what} removes {got.removed}, expected {want.removed}")
    changed = {c.key: c.fields for c in got.changed}
    if sorted(changed) != sorted(want.changed):
        problems.append(f"{what} changes {sorted(changed)}, expected {sorted(want.changed)}")
    for key, fields in want.changed.items():
        if fields is not None and key in changed and sorted(changed[key]) != sorted(fields):
            problems.append(f"{what} changes {key}'s {changed[key]}, expected {fields}")
    return problems


def _review(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str]:
    problems = []
    if expect.proposed and not done.proposals:
        problems.append("no plan was proposed")
    if not expect.proposed and done.proposals:
        problems.append(f"a plan was proposed ({len(done.proposals)} time(s)), expected none")
    if expect.proposals is not None and len(done.proposals) != expect.proposals:
        problems.append(f"{len(done.proposals)} proposal(s), expected {expect.proposals}")
    if done.unused_reviews:
        problems.append(f"{done.unused_reviews} review answer(s) were never asked for")
    if expect.revised is not None and done.proposals:
        first, last = done.proposals[0].plan, done.proposals[-1].plan
        problems += delta_problems(plan_delta(first, last), expect.revised, "the revision")
    if done.proposals and expect.question_contains:
        question = done.proposals[-1].question.lower()
        problems += [
            f"the review question lacks {s!r}"
            for s in expect.question_contains
            if s.lower() not in question
        ]
    reply = done.reply.lower()
    problems += [f"reply lacks {s!r}" for s in expect.reply_contains if s.lower() not in reply]
    return problems


def plan_review(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """A plan was (or was not) proposed; feedback gave a revised plan with exactly the
    expected change; every review the scenario gives was asked for; reply text."""
    return per_turn("plan_review", scenario, outcome, _review, _review_text)


def _delta(expect: PlanTurnExpect, done: PlanTurnOutcome) -> list[str] | None:
    last = done.last_proposal
    if expect.no_delta:
        return [] if last is None or last.delta is None else [f"unexpected delta {last.delta}"]
    if expect.delta is None:
        return None
    if last is None:
        return ["no plan was proposed"]
    return delta_problems(last.delta, expect.delta, "the delta")


def plan_delta_listed(scenario: Scenario, outcome: RunOutcome) -> GradeResult | None:
    """A changed spec's proposal lists exactly the expected added / changed / removed
    workflows (a first plan: no delta at all)."""
    return per_turn("plan_delta", scenario, outcome, _delta, _delta_text)
