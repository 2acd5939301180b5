"""A project plan (DESIGN §5a): the workflows a long SOP or spec becomes, their
contracts, and the leaf-first order they are built in.

The plan is the input model of the ``propose_plan`` tool, so its docstrings and
field descriptions are prompt text. It is checked here, as data, before anyone
sees it: keys unique, dependencies known and acyclic, ``order`` a leaf-first
order of every workflow. :func:`check_plan` returns every problem with a
stable code, so the model can fix its proposal and the offline planner can
refuse precisely.

A dependency is a hand-off: ``B.depends_on = ["a"]`` means A's run ends by
handing its result to B, which starts on a webhook. :func:`contracts` spells
these out (who hands what to whom, through which webhook path); they are
stored with the project and are what the hand-off steps implement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.base import ToolArgs
from tools.document.cron import cron_problem
from tools.edits.add_review_gate import DECISIONS

KEY_PATTERN = r"^[a-z][a-z0-9-]{0,39}$"
MAX_WORKFLOWS = 20
Item = Annotated[str, Field(min_length=1, max_length=200)]
"""A named piece of data (an input or output)."""
Step = Annotated[str, Field(min_length=1, max_length=500)]
"""One step, one sentence."""
Key = Annotated[str, Field(pattern=KEY_PATTERN)]


class PlannedTrigger(ToolArgs):
    """How a planned workflow starts."""

    type: Literal["webhook", "cron"] = Field(
        description="'webhook' (a request arrives, or an earlier workflow hands off to this "
        "one) or 'cron' (on a schedule)."
    )
    cron_expression: str | None = Field(
        None, max_length=100, description="5-field cron for 'cron' triggers, e.g. '0 7 * * 1-5'."
    )


class PlannedWorkflow(ToolArgs):
    """One workflow of the plan: one process of the SOP."""

    key: str = Field(
        pattern=KEY_PATTERN,
        description="Stable key: the name as a slug, lower-case letters, digits and '-', "
        "starting with a letter ('Coverage check' -> 'coverage-check'). Dependencies and the "
        "order refer to it; a revised plan keeps the key of every workflow it keeps.",
    )
    name: str = Field(min_length=1, max_length=100, description="Display name of the workflow.")
    purpose: str = Field(
        min_length=1, max_length=500, description="One sentence: what the workflow is for."
    )
    trigger: PlannedTrigger = Field(description="How it starts.")
    inputs: list[Item] = Field(
        default_factory=list,
        max_length=20,
        description="The data it receives (e.g. 'referral'); for a workflow that depends on "
        "another, what that one hands over.",
    )
    outputs: list[Item] = Field(
        default_factory=list,
        max_length=20,
        description="The data it produces for workflows that depend on it.",
    )
    depends_on: list[Key] = Field(
        default_factory=list,
        max_length=MAX_WORKFLOWS,
        description="Keys of the workflows whose result this one uses. Each hands off to it "
        "when it finishes, so this workflow's trigger is a webhook.",
    )
    review_by: str | None = Field(
        None,
        max_length=60,
        description="Set when this workflow starts on a person's decision about what the "
        "workflows it depends on hand over ('coordinator' for 'after the coordinator reviews "
        "Intake's result'): they end by sending the case to the review queue instead of "
        "handing off directly, and this one starts on the decision (approved, rejected or "
        "corrected). Leave it out for a plain hand-off.",
    )
    steps: list[Step] = Field(
        default_factory=list,
        max_length=50,
        description="What the workflow does, one sentence a step, in order, as the user said "
        "it. The workflow is built from these.",
    )


class ProjectPlan(ToolArgs):
    """Propose how to split the user's SOP or spec into workflows, for the user to review
    before anything is built. Use it for a text that describes several processes, or when
    asked for a plan. Nothing is built until the user approves; feedback gets a revised
    plan. List every process as a workflow, name the data each hands to the next, and give
    a leaf-first build order (every workflow after those it depends on)."""

    summary: str = Field(
        min_length=1, max_length=1000, description="Two or three sentences: the plan as a whole."
    )
    workflows: list[PlannedWorkflow] = Field(
        min_length=1, max_length=MAX_WORKFLOWS, description="The workflows, one per process."
    )
    order: list[Key] = Field(
        max_length=MAX_WORKFLOWS,
        description="Every workflow key once, leaf first: a workflow comes after every "
        "workflow it depends on.",
    )

    def by_key(self) -> dict[str, PlannedWorkflow]:
        return {w.key: w for w in self.workflows}


class Contract(BaseModel):
    """What one workflow hands to another when it finishes, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    source: str
    """The key of the workflow that hands off (it is built with a hand-off step)."""
    target: str
    """The key of the workflow that receives (its webhook trigger starts it)."""
    data: list[str]
    """What is handed over: the source's outputs that the target lists as inputs (or all
    of the source's outputs when the target names none of them)."""
    via: Literal["webhook", "review"] = "webhook"
    """The hand-off mechanism: the source posts its result to the target's webhook, or
    (``review``) sends it to the review queue and the reviewer's decision comes to it."""
    reviewer: str | None = None
    """Who decides, for a ``review`` contract."""
    decisions: list[str] = []
    """The decision payload's ``decision`` values for a ``review`` contract; the payload is
    ``{decision, case, corrected?}`` (``tools.edits.add_review_gate``)."""
    webhook_path: str
    """The target's webhook path (Lightning serves it at ``/i/<webhook_path>``)."""


@dataclass(frozen=True)
class PlanProblem:
    """One reason a plan cannot be accepted as it is."""

    code: str
    """Stable: duplicate_key, unknown_dependency, self_dependency, dependency_cycle,
    order_mismatch, order_not_leaf_first, trigger_mismatch, invalid_cron,
    review_without_source."""
    message: str
    """What is wrong, naming the workflow keys, for the model and the user."""


def webhook_path(project_slug: str, key: str) -> str:
    """The webhook path of a planned workflow: unique per project and stable across plan
    revisions, so hand-offs keep working when the plan changes."""
    return f"{project_slug}-{key}" if project_slug else key


def check_plan(plan: ProjectPlan) -> list[PlanProblem]:
    """Every problem of ``plan`` (empty: the plan can be proposed)."""
    problems: list[PlanProblem] = []
    keys = [w.key for w in plan.workflows]
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            problems.append(PlanProblem("duplicate_key", f"Two workflows have the key {key!r}."))
        seen.add(key)
    for workflow in plan.workflows:
        for dep in workflow.depends_on:
            if dep == workflow.key:
                problems.append(
                    PlanProblem("self_dependency", f"{workflow.key!r} depends on itself.")
                )
            elif dep not in seen:
                problems.append(
                    PlanProblem(
                        "unknown_dependency",
                        f"{workflow.key!r} depends on {dep!r}, which is not in the plan.",
                    )
                )
        if workflow.review_by and not workflow.depends_on:
            problems.append(
                PlanProblem(
                    "review_without_source",
                    f"{workflow.key!r} starts on the {workflow.review_by}'s decision, but on "
                    "nothing's result: name the workflow whose result is reviewed (depends_on).",
                )
            )
        if workflow.depends_on and workflow.trigger.type != "webhook":
            problems.append(
                PlanProblem(
                    "trigger_mismatch",
                    f"{workflow.key!r} depends on {', '.join(workflow.depends_on)} and so starts "
                    "when they hand off to it: its trigger must be a webhook.",
                )
            )
        cron = workflow.trigger.cron_expression
        if workflow.trigger.type == "cron" and not cron:
            problems.append(
                PlanProblem("trigger_mismatch", f"{workflow.key!r} is on a schedule with no cron.")
            )
        elif workflow.trigger.type == "cron" and cron and (wrong := cron_problem(cron)):
            problems.append(
                PlanProblem(
                    "invalid_cron", f"{workflow.key!r}: {cron!r} is not a schedule: {wrong}"
                )
            )
    cycle = _cycle(plan)
    if cycle:
        problems.append(
            PlanProblem("dependency_cycle", "The dependencies go round: " + " -> ".join(cycle))
        )
    if sorted(plan.order) != sorted(set(keys)) or len(plan.order) != len(set(plan.order)):
        problems.append(
            PlanProblem(
                "order_mismatch",
                "The order must list every workflow key exactly once: "
                f"{', '.join(sorted(set(keys)))}.",
            )
        )
    elif not cycle:
        position = {key: i for i, key in enumerate(plan.order)}
        for workflow in plan.workflows:
            for dep in workflow.depends_on:
                if dep in position and position[dep] > position[workflow.key]:
                    problems.append(
                        PlanProblem(
                            "order_not_leaf_first",
                            f"{workflow.key!r} is built before {dep!r}, which it depends on.",
                        )
                    )
    return problems


def leaf_first_order(workflows: list[PlannedWorkflow]) -> list[str]:
    """A leaf-first order (dependencies first), keeping the given order where it can.
    Unknown dependencies are ignored; a cycle's members come last, in the given order."""
    keys = [w.key for w in workflows]
    deps = {w.key: [d for d in w.depends_on if d in keys and d != w.key] for w in workflows}
    order: list[str] = []
    while len(order) < len(keys):
        ready = [k for k in keys if k not in order and all(d in order for d in deps[k])]
        if not ready:
            order += [k for k in keys if k not in order]
            break
        order.append(ready[0])
    return order


def contracts(plan: ProjectPlan, project_slug: str = "") -> list[Contract]:
    """The hand-offs the plan implies, in build order of their targets."""
    by_key = plan.by_key()
    found: list[Contract] = []
    for key in plan.order:
        target = by_key.get(key)
        if target is None:
            continue
        for dep in target.depends_on:
            source = by_key.get(dep)
            if source is None:
                continue
            shared = [item for item in source.outputs if item in target.inputs]
            review = (
                {"via": "review", "reviewer": target.review_by, "decisions": list(DECISIONS)}
                if target.review_by
                else {}
            )
            found.append(
                Contract(
                    source=source.key,
                    target=target.key,
                    data=shared or list(source.outputs),
                    webhook_path=webhook_path(project_slug, target.key),
                    **review,
                )
            )
    return found


def _cycle(plan: ProjectPlan) -> list[str]:
    deps = {w.key: list(w.depends_on) for w in plan.workflows}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(key: str) -> list[str]:
        state[key] = 1
        path.append(key)
        for dep in deps.get(key, []):
            if dep not in deps or dep == key:
                continue
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[key] = 2
        return []

    for key in deps:
        if key not in state:
            found = visit(key)
            if found:
                return found
    return []
