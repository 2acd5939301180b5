"""Revising a proposed plan from the user's feedback (plan mode, offline).

A few clear forms, each changing one thing, several allowed one per line or
sentence:

* "remove Status report" / "drop the Status report workflow";
* "rename Coverage check to Eligibility check" (the key stays, so the delta says
  "changed", not "removed and added");
* "Document verification should not depend on Intake" / "Document verification
  uses Coverage check's result";
* "run Status report every day at 7" / "run Intake on a webhook";
* "add a step to Intake: Email the coordinator";
* or a whole new spec, read like the first one.

Anything else is refused, and the plan stays as it was: a revision the offline
model is unsure of is never proposed.
"""

from __future__ import annotations

import re

from agents.offline import spec_patterns as SP
from agents.offline.grammar import (
    QUOTED,
    fit_name,
    has_loose_quote,
    name_note,
    norm,
    oxford,
    split_at,
    strip_polite,
    unquote,
)
from agents.offline.schedule import find_schedule
from agents.offline.spec import Refusal, read_spec_noted
from agents.offline.spec_layout import lookup, lookup_all
from tools.plan import PlannedTrigger, PlannedWorkflow, ProjectPlan, check_plan, leaf_first_order

_WORKFLOW = r"(?:\s+(?:workflow|process))?"
_REMOVE = re.compile(
    rf"^(?:remove|drop|delete)\s+(?:the\s+)?(?P<x>.+?){_WORKFLOW}(?:\s+from\s+the\s+plan)?$",
    re.I,
)
_RENAME = re.compile(r"^(?:rename|call)\s+(?:the\s+)?(?P<rest>.+)$", re.I)
_NO_DEPENDENCY = re.compile(
    r"^(?P<b>.+?)\s+(?:should\s+not|shouldn'?t|does\s+not|doesn'?t|need\s+not|must\s+not"
    r"|does\s+not\s+need\s+to)\s+(?:depend\s+on|use|need|wait\s+for|run\s+after)\s+"
    r"(?P<a>.+?)(?:(?:'s|’s)\s+(?:results?|outputs?))?$",
    re.I,
)
_DEPENDENCY = re.compile(
    r"^(?P<b>.+?)\s+(?:uses|should\s+use|needs|should\s+depend\s+on|depends\s+on"
    r"|should\s+run\s+after|runs\s+after)\s+(?:the\s+)?(?P<a>.+?)"
    r"(?:(?:'s|’s)\s+(?:results?|outputs?))?$",
    re.I,
)
_RUN = re.compile(r"^(?:run|schedule|start)\s+(?:the\s+)?(?P<rest>.+)$", re.I)
_ADD_STEP = re.compile(
    r"^add\s+(?:a\s+|another\s+)?step\s+to\s+(?:the\s+)?(?P<x>[^:]+?)\s*:\s*(?P<step>.+)$",
    re.I | re.S,
)
# The same sentence split as an edit turn's (:mod:`.planner`): ". " before any letter,
# ";", a new line, "and then".
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z])|;\s*|\n+|,?\s+and\s+then\s+|,\s+then\s+", re.I)
_LOOKS_LIKE_SPEC = re.compile(r"^\s*(?:#{1,6}\s|\d{1,2}[.)]\s)", re.M)
FORMS = (
    '"remove <workflow>", "rename <workflow> to <new name>", "<workflow> should not '
    'depend on <workflow>", "<workflow> uses <workflow>\'s result", "run <workflow> '
    'every day at 7", "add a step to <workflow>: <step>", or a whole new spec'
)


def revise_plan(plan: ProjectPlan, feedback: str) -> ProjectPlan | Refusal:
    """``plan`` changed as ``feedback`` says, or a refusal (the plan unchanged)."""
    return revise_plan_noted(plan, feedback)[0]


def revise_plan_noted(plan: ProjectPlan, feedback: str) -> tuple[ProjectPlan | Refusal, list[str]]:
    """:func:`revise_plan`, and what each name the user typed became to fit OpenFn's name
    rule (:func:`.grammar.name_note`), when one had to change."""
    text = feedback.strip()
    if not text:
        return _not_understood(text), []
    if len(_LOOKS_LIKE_SPEC.findall(text)) >= 2:
        return read_spec_noted(text, known=plan)
    notes: list[str] = []
    outcome = _revise(plan, text, notes)
    return outcome, notes if isinstance(outcome, ProjectPlan) else []


def _revise(plan: ProjectPlan, text: str, notes: list[str]) -> ProjectPlan | Refusal:
    workflows = [w.model_copy(deep=True) for w in plan.workflows]
    understood: list[str] = []
    refusals: list[Refusal] = []
    for part in (p.strip().rstrip(".!").strip() for p in _SPLIT.split(text)):
        if not part:
            continue
        outcome = _apply([w.model_copy(deep=True) for w in workflows], strip_polite(part), notes)
        if isinstance(outcome, Refusal):
            refusals.append(outcome)
        else:
            understood.append(part)
            workflows = outcome
    if refusals:
        return _partly_understood(understood, refusals)
    if not workflows:
        return Refusal("That would leave the plan with no workflows, so the plan is unchanged.")
    revised = plan.model_copy(update={"workflows": workflows, "order": leaf_first_order(workflows)})
    revised = ProjectPlan.model_validate(revised.model_dump())
    problems = check_plan(revised)
    if problems:
        listed = "\n".join(f"- {p.message}" for p in problems)
        return Refusal(
            f"That change would make the plan invalid, so the plan is unchanged:\n{listed}"
        )
    return revised


def _apply(
    workflows: list[PlannedWorkflow], part: str, notes: list[str]
) -> list[PlannedWorkflow] | Refusal:
    step = _ADD_STEP.match(part)
    if step:
        target = _find(workflows, step.group("x"))
        if isinstance(target, Refusal):
            return target
        target.steps.append(step.group("step").strip().rstrip("."))
        return workflows
    removal = _REMOVE.match(part)
    if removal:
        targets = _several(workflows, removal.group("x"))
        if isinstance(targets, Refusal):
            return targets
        for target in targets:
            for other in workflows:
                if target.key in other.depends_on:
                    _drop_dependency(other, target, workflows)
            workflows = [w for w in workflows if w.key != target.key]
        return workflows
    rename = _RENAME.match(part)
    if rename:
        return _rename(workflows, rename.group("rest"), part, notes)
    for pattern, add in ((_NO_DEPENDENCY, False), (_DEPENDENCY, True)):
        match = pattern.match(part)
        if match is None:
            continue
        b, a = _find(workflows, match.group("b")), _find(workflows, match.group("a"))
        if isinstance(b, Refusal):
            return b
        if isinstance(a, Refusal):
            return a
        return _add_dependency(b, a, workflows) if add else _remove_dependency(b, a, workflows)
    run = _RUN.match(part)
    if run:
        return _run(workflows, run.group("rest"), part)
    return _not_understood(part)


def _rename(
    workflows: list[PlannedWorkflow], rest: str, part: str, notes: list[str]
) -> list[PlannedWorkflow] | Refusal:
    readings = []
    for left, right in split_at(rest, "to"):
        target = lookup(workflows, left, feedback=True)
        name = unquote(right)
        if target is not None and name and not (has_loose_quote(name) and not QUOTED.match(right)):
            readings.append((target, name))
    if len(readings) > 1:
        options = oxford([f'"{t.name}" to "{n}"' for t, n in readings], "or")
        return Refusal(
            f"Do you mean renaming {options}? Put the names in quotes to say which. The plan "
            "is unchanged."
        )
    for target, name in readings:
        if len(name) > 100:
            return Refusal("That name is too long (100 characters at most); the plan is unchanged.")
        if any(norm(w.name) == norm(name) and w is not target for w in workflows):
            return Refusal(f'Another workflow is already called "{name}"; the plan is unchanged.')
        target.name = fit_name(name) or name
        notes.append(name_note(name, target.name))
        return workflows
    named = rest.split(" to ")[0]
    if lookup(workflows, named, feedback=True) is None and " to " in rest:
        return _missing(workflows, named)
    return _not_understood(part)


def _run(workflows: list[PlannedWorkflow], rest: str, part: str) -> list[PlannedWorkflow] | Refusal:
    webhook = re.match(r"^(?P<x>.+?)\s+(?:on|by|via|from)\s+(?:an?\s+)?webhook$", rest, re.I)
    if webhook:
        target = _find(workflows, webhook.group("x"))
        if isinstance(target, Refusal):
            return target
        target.trigger = PlannedTrigger(type="webhook")
        return workflows
    schedule = find_schedule(rest)
    if schedule is None or not SP.RUN_WORDS.match(rest[schedule.end :]):
        return _not_understood(part)
    target = _find(workflows, rest[: schedule.start])
    if isinstance(target, Refusal):
        return target
    if target.depends_on:
        names = oxford([_name(workflows, k) for k in target.depends_on])
        return Refusal(
            f'"{target.name}" uses the result of {names}, so it starts when that hands off to '
            f'it and cannot also run on a schedule. Say "{target.name} should not depend on '
            f'..." first. The plan is unchanged.'
        )
    target.trigger = PlannedTrigger(type="cron", cron_expression=schedule.cron)
    return workflows


def _add_dependency(
    b: PlannedWorkflow, a: PlannedWorkflow, workflows: list[PlannedWorkflow]
) -> list[PlannedWorkflow] | Refusal:
    if b.trigger.type == "cron":
        return Refusal(
            f'"{b.name}" runs on a schedule; a workflow that uses another\'s result starts when '
            f'that one hands off to it. Say "run {b.name} on a webhook" with it if that is what '
            "you mean. The plan is unchanged."
        )
    if a.key not in b.depends_on:
        b.depends_on.append(a.key)
    handed = a.outputs or [f"{a.name} result"]
    a.outputs = list(dict.fromkeys([*a.outputs, *handed]))
    b.inputs = list(dict.fromkeys([*b.inputs, *handed]))
    return workflows


def _remove_dependency(
    b: PlannedWorkflow, a: PlannedWorkflow, workflows: list[PlannedWorkflow]
) -> list[PlannedWorkflow] | Refusal:
    if a.key not in b.depends_on:
        return Refusal(f'"{b.name}" does not depend on "{a.name}"; the plan is unchanged.')
    _drop_dependency(b, a, workflows)
    return workflows


def _drop_dependency(
    b: PlannedWorkflow, a: PlannedWorkflow, workflows: list[PlannedWorkflow]
) -> None:
    """B no longer uses A: what only A handed to B is no longer one of B's inputs."""
    b.depends_on = [k for k in b.depends_on if k != a.key]
    by_key = {w.key: w for w in workflows}
    still = {item for k in b.depends_on if k in by_key for item in by_key[k].outputs}
    b.inputs = [i for i in b.inputs if i not in a.outputs or i in still]


def _several(workflows: list[PlannedWorkflow], ref: str) -> list[PlannedWorkflow] | Refusal:
    """'Status report', or 'Status report and Document verification' (each must exist)."""
    found, unknown = lookup_all(workflows, ref, feedback=True)
    if not unknown:
        return found
    if not found:
        # Nothing in it is a workflow: it may be one name, so it is named as said.
        return _missing(workflows, ref)
    # "Status report and Triage": a list, so name the part that is not in the plan.
    return _missing(workflows, *unknown, understood=found)


def _find(workflows: list[PlannedWorkflow], ref: str) -> PlannedWorkflow | Refusal:
    found = lookup(workflows, ref, feedback=True)
    return found if found is not None else _missing(workflows, ref)


def _missing(
    workflows: list[PlannedWorkflow], *refs: str, understood: list[PlannedWorkflow] | None = None
) -> Refusal:
    names = oxford([f'"{w.name}"' for w in workflows])
    called = oxford([f'"{unquote(r)}"' for r in refs], "or")
    said = f"There is no workflow called {called} in the plan (it has {names})"
    if understood:
        found = oxford([f'"{w.name}"' for w in understood])
        return Refusal(f"{said}. I found {found} but removed nothing, so the plan is unchanged.")
    return Refusal(f"{said}, so the plan is unchanged.")


def _name(workflows: list[PlannedWorkflow], key: str) -> str:
    return next((f'"{w.name}"' for w in workflows if w.key == key), f'"{key}"')


def _partly_understood(understood: list[str], refusals: list[Refusal]) -> Refusal:
    """Every part must be clear before anything changes: what was not, and, if some of
    it was, what that was (so the user can send it again without the rest)."""
    said = " ".join(dict.fromkeys(r.text for r in refusals))
    if not understood:
        return Refusal(said)
    parts = oxford([f'"{p}"' for p in understood])
    return Refusal(
        f"I understood {parts}, but not all of your message, so I changed nothing: {said}"
    )


def _not_understood(part: str) -> Refusal:
    said = f'"{part}"' if part else "an empty message"
    return Refusal(
        f"I didn't understand {said} as a change to the plan, so the plan is unchanged. "
        f"I understand {FORMS}."
    )
