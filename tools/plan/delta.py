"""What a revised plan changes relative to the plan a project already has (DESIGN §5a.5).

A changed spec never rebuilds silently: the new proposal is compared with the
stored plan by workflow key, and only what is added or changed is built once
the user approves. Removed workflows are listed, never deleted by the plan.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tools.plan.model import PlannedWorkflow, ProjectPlan

COMPARED_FIELDS = (
    "name",
    "purpose",
    "trigger",
    "inputs",
    "outputs",
    "depends_on",
    "review_by",
    "steps",
)


class WorkflowChange(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str
    """The workflow's key (the same in both plans)."""
    fields: list[str]
    """Which of its fields differ, in :data:`COMPARED_FIELDS` order."""


class PlanDelta(BaseModel):
    """The difference between the stored plan and a proposal, by workflow key."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    added: list[str] = Field(default_factory=list)
    """Keys only the proposal has, in its build order: they are built."""
    changed: list[WorkflowChange] = Field(default_factory=list)
    """Keys both have with different fields, in the proposal's order: they are revised."""
    removed: list[str] = Field(default_factory=list)
    """Keys only the stored plan has: reported, and left in the project as they are."""
    unchanged: list[str] = Field(default_factory=list)
    """Keys both have with the same fields: not touched."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def to_build(self) -> list[str]:
        """Keys the approved delta builds or revises (added and changed)."""
        return [*self.added, *(c.key for c in self.changed)]


def _fields(workflow: PlannedWorkflow) -> dict[str, object]:
    return workflow.model_dump(include=set(COMPARED_FIELDS))


def plan_delta(old: ProjectPlan, new: ProjectPlan) -> PlanDelta:
    before = old.by_key()
    after = new.by_key()
    added, changed, unchanged = [], [], []
    for key in new.order:
        workflow = after.get(key)
        if workflow is None:
            continue
        previous = before.get(key)
        if previous is None:
            added.append(key)
            continue
        a, b = _fields(previous), _fields(workflow)
        differing = [f for f in COMPARED_FIELDS if a[f] != b[f]]
        if differing:
            changed.append(WorkflowChange(key=key, fields=differing))
        else:
            unchanged.append(key)
    removed = [key for key in old.order if key in before and key not in after]
    return PlanDelta(added=added, changed=changed, removed=removed, unchanged=unchanged)
