"""Laying an SOP out as a ``create_workflow`` call: steps, edges, trigger.

Steps chain on success. A branch (a decision) hangs off the step before it: the
first step of each arm gets the arm's condition (the "otherwise" arm none of
them), later steps of an arm chain on success. The step after a branch continues
from the end of every arm, except failure arms, which end the run; with no
"otherwise", a JS decision also gets an edge for "none of them" straight to that
next step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.offline.conditions import ALWAYS, SUCCESS, Condition, none_of
from agents.offline.plan import Call, call, edge_args
from agents.offline.view import View
from tools.document.names import derive_key


@dataclass
class Step:
    name: str
    adaptor: str
    key: str = ""
    systems: frozenset[str] = frozenset()
    """Every system the step's words name ("from postgres to sftp" names two)."""
    credential: str | None = None
    """The credential the text said the step runs with ("using the dhis2-prod credential")."""


@dataclass
class Arm:
    condition: Condition
    steps: list[Step] = field(default_factory=list)
    stop: bool = False
    """The run ends on this arm ("if the queue is empty, do nothing")."""


@dataclass
class Branch:
    """One decision: arms tried from the same step, and what happens otherwise."""

    arms: list[Arm] = field(default_factory=list)
    otherwise: list[Step] = field(default_factory=list)
    before: str = ""
    """What "it" meant when the decision started: every arm starts from it."""

    def steps(self) -> list[Step]:
        return [s for arm in self.arms for s in arm.steps] + self.otherwise

    def js_conditions(self) -> list[Condition]:
        return [arm.condition for arm in self.arms if arm.condition.type == "js_expression"]

    def rest_condition(self) -> Condition:
        """When the "otherwise" arm (or, with none, the next step) runs: none of the JS
        arms; after a failure arm, on success; after a success arm, on failure."""
        js = self.js_conditions()
        if js:
            return none_of(js)
        if self.arms and all(a.condition.type == "on_job_success" for a in self.arms):
            return Condition("on_job_failure")
        return SUCCESS


@dataclass
class Sop:
    items: list[Step | Branch] = field(default_factory=list)
    """Steps of the main flow and decisions, in order."""
    trigger: dict[str, object] | None = None
    name: str | None = None
    unplaced: list[str] = field(default_factory=list)
    """Parts of the text that became nothing: the build is refused while there are any."""
    reasons: list[str] = field(default_factory=list)
    """Reasons given for a step ("because ..."): understood, not steps."""
    problems: list[str] = field(default_factory=list)
    """What the reading found wrong beyond a part it could not place (two triggers, a
    failure branch it cannot tell the step of): the build is refused while there are any."""
    enable: bool = False
    """The text asked for the trigger to be on ("and enable it")."""
    steps_said: int | None = None
    """How many steps the text said there are ("with three steps:"), if it did."""

    def steps(self) -> list[Step]:
        found: list[Step] = []
        for item in self.items:
            found.extend([item] if isinstance(item, Step) else item.steps())
        return found


def create_call(sop: Sop, view: View) -> Call:
    steps: list[Step] = []
    used: set[str] = set()

    def register(step: Step) -> None:
        base, n = step.name, 2
        while derive_key(step.name) in used:
            step.name = f"{base} {n}"
            n += 1
        step.key = derive_key(step.name)
        used.add(step.key)
        steps.append(step)

    for step in sop.steps():
        register(step)
    edges: list[dict[str, object]] = []
    seen: set[tuple[str, str]] = set()

    def connect(source: str, target: str, condition: Condition) -> None:
        if (source, target) in seen or source == target:
            return
        seen.add((source, target))
        edges.append(edge_args(source, target, **_cond_kwargs(condition)))

    cursor: list[tuple[str, Condition]] = []
    last: str | None = None

    def chain(start: list[tuple[str, Condition]], arm: list[Step]) -> str:
        incoming = start
        for step in arm:
            for source, condition in incoming:
                connect(source, step.key, condition)
            incoming = [(step.key, SUCCESS)]
        return arm[-1].key

    for item in sop.items:
        if isinstance(item, Step):
            last = chain(cursor, [item])
            cursor = [(last, SUCCESS)]
            continue
        decision = last
        if decision is None:
            last = chain(cursor, item.steps())
            cursor = [(last, SUCCESS)]
            continue
        cursor = []
        for arm in item.arms:
            if arm.stop or not arm.steps:
                continue
            end = chain([(decision, arm.condition)], arm.steps)
            if arm.condition.type != "on_job_failure":
                cursor.append((end, SUCCESS))
        if item.otherwise:
            cursor.append((chain([(decision, item.rest_condition())], item.otherwise), SUCCESS))
        elif item.js_conditions():
            cursor.append((decision, item.rest_condition()))
        elif not cursor:
            cursor = [(decision, SUCCESS)]
        last = cursor[-1][0] if len(cursor) == 1 else None
    trigger = sop.trigger
    if trigger is None and not view.triggers:
        trigger = {"type": "webhook"}
    if trigger is not None and sop.enable:
        trigger = {**trigger, "enabled": True}
    name = sop.name or view.name or "New workflow"
    return call(
        "create_workflow",
        name=name,
        jobs=[{"name": s.name, "adaptor": s.adaptor} for s in steps],
        edges=edges,
        trigger=trigger,
    )


def _cond_kwargs(condition: Condition) -> dict[str, str | None]:
    if condition == ALWAYS:
        return {"condition_type": "always"}
    if condition.type == "on_job_success":
        return {}
    return {
        "condition_type": condition.type,
        "expression": condition.edge_expression,
        "label": condition.label,
    }
