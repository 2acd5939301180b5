"""Typed events a turn emits through LangGraph's custom stream.

The graph never touches a socket: nodes write these models with the run's
stream writer, the runner yields them, and the service turns each into its
WebSocket frame (``app/ws/protocol.py`` adds ``turn_id`` and, for workflow
frames, ``workflow_id``). Consumers read fields; nothing parses the status
prose back out. ``wire()`` is the event's JSON form, the same keys the frame
carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.document.structure import Change
from tools.plan import Contract, PlanDelta, ProjectPlan
from tools.testrun import TestRun


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def wire(self) -> dict[str, Any]:
        """The event as its frame's JSON object (fields that are ``None`` are left out)."""
        return self.model_dump(mode="json", exclude_none=True)


class RouteEvent(_Event):
    """Which agent answers this turn."""

    type: Literal["route"] = "route"
    destination: Literal["planner", "job_code"]
    """``planner`` (structure and code through tools) or ``job_code`` (the step on the page)."""


class StatusEvent(_Event):
    """A tool call starting (``spinner``) or finished (``settled``), for people to read."""

    type: Literal["status"] = "status"
    phase: Literal["spinner", "settled"]
    tool: str
    """The tool's registered name."""
    text: str
    """Human status line; display only, never parsed."""
    tool_use_id: str | None = None
    """The model's tool_use id this status belongs to (absent on the direct code route)."""
    job_key: str | None = None
    """The step a code sub-agent works on (code calls only)."""
    job_name: str | None = None
    """That step's display name, when it is known."""


class WorkflowEvent(_Event):
    """A committed version of the document: the graph's event and the bus/wire frame."""

    type: Literal["workflow"] = "workflow"
    version: int
    yaml: str
    changes: list[dict[str, str]] = Field(default_factory=list)
    workflow_id: str | None = None
    turn_id: str | None = None


class DeltaEvent(_Event):
    """A chunk of the assistant's reply while it streams."""

    type: Literal["message.delta"] = "message.delta"
    text: str


class MessageEvent(_Event):
    """The assistant's whole final reply for the turn."""

    type: Literal["message"] = "message"
    text: str
    offer: Literal["plan"] | None = None
    """Set when the reply offers to send the same message again in that mode (``plan``: a
    message describing several processes, in an editing session; nothing was changed)."""


class ConfirmEvent(_Event):
    """The turn is paused until someone answers ``question``."""

    type: Literal["confirm.required"] = "confirm.required"
    request_id: str
    question: str


class PlanProposedEvent(_Event):
    """A plan turn is paused until someone reviews the proposed plan (DESIGN §5a.2)."""

    type: Literal["plan.proposed"] = "plan.proposed"
    request_id: str
    """Answer with ``confirm {request_id, approved, feedback?}``."""
    question: str
    """What is asked, for people to read."""
    plan: ProjectPlan
    contracts: list[Contract] = Field(default_factory=list)
    """The hand-offs between the planned workflows."""
    delta: PlanDelta | None = None
    """What the plan changes relative to the one built before, when there is one."""
    revision: int = 1
    """Counts the project's proposals; a revision after feedback adds one."""


class PlanProgressEvent(_Event):
    """One planned workflow's build started, finished or failed."""

    type: Literal["plan.progress"] = "plan.progress"
    workflow_key: str
    workflow_id: str | None = None
    """The project's workflow for this key, once it exists."""
    status: Literal["building", "built", "failed"]
    message: str | None = None
    """Why it failed, or what its build said."""


class ProposalChange(BaseModel):
    """One change of a review-mode proposal: one tool call (or one step's new code)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    """Stable within the proposal (``c1``, ``c2``, ...): what a ``review`` answer accepts."""
    tool: str
    """The tool that made it (its registered name)."""
    summary: str
    """What it does, in plain words."""
    impact: list[str] = Field(default_factory=list)
    """What it removes, disables or leaves unreachable, by name (DESIGN §5c); empty when
    nothing stops running."""


class ProposalEvent(_Event):
    """A review-mode turn is paused until someone accepts all, some or none of its changes
    (DESIGN §5c). Nothing was committed; watchers saw nothing."""

    type: Literal["proposal"] = "proposal"
    request_id: str
    """Answer with ``review {request_id, accepted: [change ids]}``."""
    question: str
    """What is asked, for people to read."""
    base_version: int
    """The committed version the draft was made from."""
    yaml: str
    """The draft document, every change applied."""
    diff: str
    """A unified diff of the draft against ``base_version``."""
    changes: list[ProposalChange]


class RunProgressEvent(_Event):
    """A step of a test run started or finished."""

    type: Literal["run.progress"] = "run.progress"
    run_id: str
    step_key: str
    status: Literal["started", "succeeded", "failed"]


class RunCompletedEvent(_Event):
    """A test run finished (whatever its status); ``run.summary`` says it in words."""

    type: Literal["run.completed"] = "run.completed"
    run: TestRun


class ModelCallUsage(BaseModel):
    """One model call of a turn: who made it, on which model, what it used and cost.

    ``input_tokens`` are the uncached prompt tokens (the Messages API's meaning);
    the whole prompt is ``input + cache_creation + cache_read``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["router", "planner", "job_code"]
    """The agent that called: the router, the planner, or a code sub-agent."""
    model: str
    """The model id that answered (the API's, e.g. a dated snapshot), or the client's name."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    """Prompt tokens written to the cache (5-minute lifetime)."""
    cache_read_input_tokens: int = 0
    """Prompt tokens read from the cache."""
    cost_usd: float | None = None
    """From the price table; ``None`` when the model has no price."""
    prompt_name: str | None = None
    prompt_version: str | None = None
    prompt_hash: str | None = None
    error: str | None = None
    """The error code when the call failed (its tokens are then unknown and counted 0)."""


class TurnUsage(BaseModel):
    """Token counts and cost of every model call of the turn (router and sub-agents too)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = 0.0
    """The calls' costs summed; ``None`` when any call's model has no price."""
    calls: list[ModelCallUsage] = Field(default_factory=list)
    """Each call, in the order they returned."""

    @classmethod
    def of(cls, calls: Sequence[ModelCallUsage]) -> TurnUsage:
        costs = [c.cost_usd for c in calls]
        return cls(
            input_tokens=sum(c.input_tokens for c in calls),
            output_tokens=sum(c.output_tokens for c in calls),
            cache_creation_input_tokens=sum(c.cache_creation_input_tokens for c in calls),
            cache_read_input_tokens=sum(c.cache_read_input_tokens for c in calls),
            cost_usd=None if None in costs else round(sum(c or 0.0 for c in costs), 10),
            calls=list(calls),
        )


class TurnCompletedEvent(_Event):
    """The turn's last event when it ran to the end."""

    type: Literal["turn.completed"] = "turn.completed"
    version: int
    tool_rounds: int
    usage: TurnUsage
    duration_ms: int


Event = Annotated[
    RouteEvent
    | StatusEvent
    | WorkflowEvent
    | DeltaEvent
    | MessageEvent
    | ConfirmEvent
    | PlanProposedEvent
    | PlanProgressEvent
    | ProposalEvent
    | RunProgressEvent
    | RunCompletedEvent
    | TurnCompletedEvent,
    Field(discriminator="type"),
]


def workflow_event(
    yaml: str,
    version: int,
    changes: Sequence[Change],
    *,
    workflow_id: str | None = None,
    turn_id: str | None = None,
) -> WorkflowEvent:
    """A committed version of the document, from the changes that made it."""
    return WorkflowEvent(
        version=version,
        yaml=yaml,
        changes=[c.as_dict() for c in changes],
        workflow_id=workflow_id,
        turn_id=turn_id,
    )
