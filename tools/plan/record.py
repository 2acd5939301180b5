"""The plan as the project stores it: the proposal, its contracts, where review and
building stand, and each planned workflow's outcome.

One JSON document in ``projects.plan``. It is written before any frame about it
goes out (``plan.proposed``, ``plan.progress``), so a reload on any device shows
what the socket showed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.plan.delta import PlanDelta
from tools.plan.model import Contract, ProjectPlan

PlanStatus = Literal["proposed", "rejected", "building", "built", "partial"]
WorkflowStatus = Literal["pending", "building", "built", "failed", "unchanged"]


class PlannedOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")
    workflow_id: str | None = None
    """The project's workflow built for this key (``None`` until it is created)."""
    status: WorkflowStatus = "pending"
    """``pending`` until its turn in the order, then ``building`` and ``built`` or
    ``failed``; ``unchanged`` when an approved delta left it alone."""
    message: str = ""
    """Why it failed, or what its build said, in a sentence."""


class PlanRecord(BaseModel):
    """The project's plan (``GET /v1/projects/{id}`` ``plan``)."""

    model_config = ConfigDict(extra="forbid")
    status: PlanStatus
    """``proposed`` (waiting for review), ``rejected``, ``building``, ``built`` (every
    workflow built) or ``partial`` (some failed)."""
    plan: ProjectPlan
    """The latest proposal; once approved, the plan that was built."""
    contracts: list[Contract] = Field(default_factory=list)
    """The hand-offs between its workflows."""
    workflows: dict[str, PlannedOutcome] = Field(default_factory=dict)
    """Each planned workflow's outcome, by key."""
    revision: int = 1
    """Counts proposals on this project (a revision after feedback or a delta adds one)."""
    turn_id: str | None = None
    """The turn that proposed it."""
    request_id: str | None = None
    """The confirmation the review answers, while ``status`` is ``proposed``."""
    delta: PlanDelta | None = None
    """What the proposal changes relative to the plan built before, when there was one."""
    built_plan: ProjectPlan | None = None
    """The last plan that was built (what a delta is computed against)."""
