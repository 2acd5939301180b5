"""The state of one plan turn (DESIGN §5a), as LangGraph checkpoints it.

A plan turn proposes a plan, pauses for review (the pause is a checkpoint, so
it survives reloads, other devices and other workers), and on approval builds
the planned workflows in order. Everything needed to resume lives here; the
project's stored plan record is the copy the REST API and reloads read.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class PlanInput(TypedDict, total=False):
    """What the service hands the plan graph to start a turn."""

    turn_id: str
    """The turn's id; also the checkpointer's thread id."""
    project_id: str
    """The project planned."""
    user_text: str
    """The user's message: the SOP or spec (or a question about the project)."""
    mode: Literal["plan", "edit"] | None
    """``plan`` when the user asked for a plan outright; otherwise the planner decides."""
    read_only: bool
    """A reviewer's session: nothing is proposed or built."""
    history: list[dict[str, str]]
    """Earlier turns of the session: user text and final assistant text only."""
    project: dict[str, Any]
    """``{name, slug, workflows: [{id, name}]}`` as the turn started."""
    record: dict[str, Any] | None
    """The project's stored plan record (``tools.plan.PlanRecord`` JSON), if it has one."""


class PlanState(PlanInput, total=False):
    """Everything a plan turn carries between nodes."""

    proposal: dict[str, Any] | None
    """The plan under review (``ProjectPlan`` JSON); ``None`` when none was proposed."""
    contracts: list[dict[str, Any]]
    """The proposal's hand-offs (``Contract`` JSON)."""
    delta: dict[str, Any] | None
    """What the proposal changes relative to the plan built before (``PlanDelta`` JSON)."""
    revision: int
    """The proposal's revision number on the project."""
    request_id: str | None
    """The review's confirmation id while it waits: a new one for every question asked,
    a re-ask of an unchanged plan included (a confirmation is answered once)."""
    asked: int
    """How many times the plan under review has been asked about in this turn (1, then
    one more each time feedback left it unchanged)."""
    feedback: str | None
    """The user's words with a "not yet" answer: the next proposal revises the plan by them."""
    decision: Literal["approved", "rejected", "revise"] | None
    """The review's outcome."""
    notice: str | None
    """Why the plan under review is unchanged after feedback (the planner's answer when
    it could not act on it); said with the next review question."""
    final_text: str
    """The reply the user gets at the end."""
