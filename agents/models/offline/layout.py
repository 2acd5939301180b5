"""Laying an SOP out as a ``create_workflow`` call: steps, edges, trigger.

Steps chain on success. A branch hangs off the step before it: the first step of
each arm gets the condition (the "otherwise" arm its negation), later steps of
an arm chain on success. The step after a branch continues from the end of every
arm, except failure arms, which end the run; with no "otherwise", a JS branch
also gets the negated edge straight to that next step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.models.offline.conditions import ALWAYS, SUCCESS, Condition
from agents.models.offline.plan import Call, call, edge_args
from agents.models.offline.view import View
from tools.document.names import derive_key


@dataclass
class Step:
    name: str
    adaptor: str
    key: str = ""


@dataclass
class Branch:
    condition: Condition
    then: list[Step] = field(default_factory=list)
    otherwise: list[Step] = field(default_factory=list)


@dataclass
class Sop:
    items: list[Step | Branch] = field(default_factory=list)
    trigger: dict[str, object] | None = None
    name: str | None = None


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

    for item in sop.items:
        for step in [item] if isinstance(item, Step) else [*item.then, *item.otherwise]:
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
        decision, condition = last, item.condition
        if decision is None:
            last = chain(cursor, item.then + item.otherwise)
            cursor = [(last, SUCCESS)]
            continue
        then_end = chain([(decision, condition)], item.then)
        else_end = (
            chain([(decision, condition.negated())], item.otherwise) if item.otherwise else None
        )
        if condition.type == "on_job_failure":
            cursor = [(else_end or decision, SUCCESS)]
        elif condition.type == "on_job_success":
            cursor = [(then_end, SUCCESS)]
        else:
            cursor = [(then_end, SUCCESS)]
            cursor.append((else_end, SUCCESS) if else_end else (decision, condition.negated()))
        last = then_end
    trigger = sop.trigger
    if trigger is None and not view.triggers:
        trigger = {"type": "webhook"}
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
