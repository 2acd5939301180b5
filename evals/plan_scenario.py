"""The ``plan:`` section of a scenario: plan-mode turns on an in-memory project.

A plan scenario drives ``agents.plan`` (the plan graph the service runs) on an
:class:`~agents.plan.runtime.InMemoryWorkspace` instead of one workflow. Each
plan turn is a user message (a spec) followed by the answers to its reviews, in
order: approve, feedback (a revised plan comes back in the same turn) or reject.
A later turn on the same project with a changed spec is a delta.

On ``scripted``, ``proposals`` are the planner's answers to its ``propose_plan``
requests, in order over the whole scenario (the ``propose_plan`` input, or a
text answer that proposes nothing); every other model call (the builds' planner
and code sub-agents) plays back the scenario's ``script:``, exactly as the
scripted path of an ordinary scenario does. A build the script does not cover
exhausts it, which fails the scenario (so "builds only those" is checked twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tools.plan.record import PlanStatus

SPECS_DIR = Path(__file__).resolve().parent / "fixtures" / "specs"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanReview(_Strict):
    """One answer to ``plan.proposed``: ``approve: true``, ``feedback: ...``, or neither
    (a plain "no": rejected)."""

    approve: bool = False
    feedback: str | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> PlanReview:
        if self.approve and self.feedback:
            raise ValueError("a review approves or gives feedback, not both")
        return self

    @property
    def kind(self) -> Literal["approve", "feedback", "reject"]:
        if self.approve:
            return "approve"
        return "feedback" if self.feedback else "reject"


class WorkflowExpect(_Strict):
    """One planned workflow of the (last) proposal."""

    key: str
    name: str | None = None
    trigger: Literal["webhook", "cron"] | None = None
    cron_expression: str | None = None
    depends_on: list[str] | None = Field(None, description="Exactly these, in any order.")
    steps: int | None = Field(None, description="How many steps the plan lists for it.")
    steps_contain: list[str] = Field(
        default_factory=list, description="Substrings (case-insensitive) some step must have."
    )


class ContractExpect(_Strict):
    source: str
    target: str
    data: list[str] | None = None


class DeltaExpect(_Strict):
    """A plan difference, exactly: keys added, keys changed (with which fields, when
    given), keys removed."""

    added: list[str] = Field(default_factory=list)
    changed: dict[str, list[str] | None] = Field(
        default_factory=dict, description="key -> the fields that differ (null: any)."
    )
    removed: list[str] = Field(default_factory=list)


class PlanTurnExpect(_Strict):
    """What one plan turn must come to. Unset fields are not graded."""

    proposed: bool = Field(True, description="A plan was proposed (false: refused/answered).")
    proposals: int | None = Field(None, description="How many plan.proposed events the turn had.")
    workflows: list[WorkflowExpect] | None = Field(
        None, description="Decomposition of the last proposal: exactly these keys."
    )
    order: list[str] | None = Field(None, description="The last proposal's build order.")
    contracts: list[ContractExpect] | None = Field(
        None, description="Exactly these source -> target hand-offs."
    )
    revised: DeltaExpect | None = Field(
        None, description="What feedback changed: the first proposal vs the last, exactly."
    )
    delta: DeltaExpect | None = Field(
        None, description="The last proposal's delta against the built plan, exactly."
    )
    no_delta: bool = Field(False, description="The proposal carries no delta (a first plan).")
    built: list[str] | None = Field(
        None, description="Keys built in this turn, in build order ([]: nothing built)."
    )
    failed: list[str] = Field(default_factory=list, description="Keys whose build must fail.")
    status: PlanStatus | None = Field(None, description="The project's plan status afterwards.")
    reply_contains: list[str] = Field(default_factory=list)
    question_contains: list[str] = Field(
        default_factory=list, description="In the last review question (e.g. a notice)."
    )


class PlanTurnSpec(_Strict):
    spec: str | None = Field(None, description="The user's message (the spec).")
    spec_file: str | None = Field(
        None, description="Or a file under evals/fixtures/specs/ (name without .md)."
    )
    reviews: list[PlanReview] = Field(
        default_factory=list, description="Answers to the turn's reviews, in order."
    )
    read_only: bool = False
    expect: PlanTurnExpect = Field(default_factory=PlanTurnExpect)

    @model_validator(mode="after")
    def _one_text(self) -> PlanTurnSpec:
        if (self.spec is None) == (self.spec_file is None):
            raise ValueError("a plan turn needs exactly one of spec and spec_file")
        return self

    def text(self, specs_dir: Path = SPECS_DIR) -> str:
        if self.spec is not None:
            return self.spec
        return (specs_dir / f"{self.spec_file}.md").read_text(encoding="utf-8")


class ProposalStep(_Strict):
    """A scripted planner answer to a ``propose_plan`` request."""

    plan: dict[str, Any] | None = Field(None, description="The propose_plan input.")
    text: str | None = Field(None, description="Or a reply without a plan.")

    @model_validator(mode="after")
    def _one(self) -> ProposalStep:
        if (self.plan is None) == (self.text is None):
            raise ValueError("a proposal step is a plan or a text")
        return self


class PlanSpec(_Strict):
    project: str = Field("Referrals", description="The project's name.")
    slug: str = Field("referrals", description="Its slug (webhook paths start with it).")
    turns: list[PlanTurnSpec] = Field(min_length=1)
    proposals: list[ProposalStep] | None = Field(
        None, description="scripted: the planner's answers to propose_plan requests, in order."
    )
    runs_in_openfn: bool = Field(
        True, description="Run every built workflow (and its hand-offs) in @openfn/runtime."
    )
