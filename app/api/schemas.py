"""REST request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agents.api import PromptUse, ProposalChange, TurnUsage
from app.store.records import ConfirmationFields, VersionFields
from app.text import ClientText
from tools.plan import Contract, PlanDelta, PlanRecord, ProjectPlan


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable, machine-readable: e.g. not_found, version_conflict.")
    message: str = Field(description="What went wrong, for a person.")
    field: str | None = Field(
        None, description="The part of an imported or exported file the error is about."
    )
    changes: list[str] | None = Field(
        None, description="A refused review answer: the proposal's changes."
    )


class ErrorResponse(BaseModel):
    """Every error answer, whatever refused the request (app/http_errors.py)."""

    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    "4XX": {"model": ErrorResponse, "description": "Refused: `{error: {code, message}}`."},
    "5XX": {"model": ErrorResponse, "description": "The server failed or lacks something."},
}
"""Declared for every operation (app/main.py), so the OpenAPI document states the shape."""


class CreateWorkflow(_Body):
    name: ClientText | None = Field(None, max_length=100)
    yaml: ClientText | None = None
    project_id: ClientText | None = Field(
        None, description="Add the workflow to this project; none: a new one-workflow project."
    )


MAX_VERSION = 2**31 - 1


class ImportWorkflows(_Body):
    format: Literal["yaml", "lightning", "cli"] = Field(
        "yaml",
        description="yaml: a Planwright document; lightning: a Lightning project.yaml "
        "(one workflow per project workflow); cli: an OpenFn CLI workflow.json.",
    )
    content: ClientText = Field(description="The file's text.")
    files: dict[ClientText, ClientText] = Field(
        default_factory=dict,
        max_length=1000,
        description="Path -> text of the files job bodies name (a Lightning body "
        "`{path: ...}`, a CLI `expression` that is a path), as OpenFn's deploy reads them "
        "from next to the spec; a body naming a file not given here is refused.",
    )
    project_id: ClientText | None = Field(
        None,
        description="Add the workflows to this project; none: one new project holds them "
        "(named as the Lightning file names its project, else after the first workflow).",
    )


class PutWorkflow(_Body):
    yaml: ClientText
    # The next version must still fit the int32 column, so the maximum has no successor.
    expected_version: int = Field(ge=1, le=MAX_VERSION - 1, strict=True)


class Revert(_Body):
    version: int = Field(ge=1, le=MAX_VERSION, strict=True)
    expected_version: int | None = Field(
        None,
        ge=1,
        le=MAX_VERSION - 1,
        strict=True,
        description="Revert only if the workflow is still at this version (409 otherwise). "
        "Without it the revert applies to whatever the current version is.",
    )


class Workflow(BaseModel):
    id: str
    project_id: str
    name: str
    version: int
    yaml: str
    problems: list[str] = Field(default_factory=list)
    unchanged: bool = Field(
        False,
        description="True when a PUT or revert asked for exactly the current text: "
        "no version was recorded.",
    )


class ImportedWorkflows(BaseModel):
    workflows: list[Workflow]


class WorkflowSummary(BaseModel):
    id: str
    project_id: str
    name: str
    version: int
    updated_at: datetime


class Version(VersionFields):
    # No docstring: it would become the schema's description in the OpenAPI document.
    pass


class CreateSession(_Body):
    """A session on a workflow (``workflow_id``) or on a project (``project_id``; with
    ``workflow_id`` too, that workflow of the project)."""

    workflow_id: ClientText | None = Field(
        None,
        description="The workflow the session's turns edit. Left out with a project_id: a "
        "project session, whose turns plan the project (plan mode).",
    )
    project_id: ClientText | None = Field(
        None, description="Open the session on this project (plan mode; it may be empty)."
    )
    read_only: bool = False
    review: bool = False
    """Its turns work on a draft and end with a proposal to accept, all, some or none
    (DESIGN §5c); a read-only session has nothing to propose."""

    @model_validator(mode="after")
    def _on_something(self) -> CreateSession:
        if self.workflow_id is None and self.project_id is None:
            raise ValueError("give workflow_id or project_id")
        return self


class Message(BaseModel):
    role: str
    content: str
    turn_id: str | None
    created_at: datetime


class Session(BaseModel):
    id: str
    workflow_id: str | None
    """The workflow its turns edit; ``None`` on a project session (plan turns)."""
    read_only: bool
    project_id: str | None = None
    """The project it was opened on; ``None`` for a session opened on one workflow."""
    review: bool = False
    """Review mode: turns end with a proposal (DESIGN §5c)."""


class PendingPlan(BaseModel):
    """The plan a paused plan turn waits on a review of (the ``plan.proposed`` fields)."""

    plan: ProjectPlan
    contracts: list[Contract] = Field(default_factory=list)
    delta: PlanDelta | None = None
    revision: int = 1


class PendingProposal(BaseModel):
    """What a paused review-mode turn proposes (the ``proposal`` frame's fields)."""

    base_version: int
    yaml: str
    diff: str
    changes: list[ProposalChange]


class PendingConfirmation(BaseModel):
    turn_id: str
    request_id: str
    question: str
    plan: PendingPlan | None = None
    """Set when the pause is a plan review: answer it with the same ``confirm`` frame."""
    proposal: PendingProposal | None = None
    """Set when the pause is a review-mode proposal: answer it with a ``review`` frame or
    ``POST /v1/sessions/{id}/review``."""


class ReviewAnswer(_Body):
    """The answer to a proposal: which of its changes to apply."""

    request_id: ClientText = Field(min_length=1, max_length=200)
    accepted: list[Annotated[str, Field(min_length=1, max_length=40)]] = Field(
        max_length=500,
        description="The ids of the changes to apply (all of them: accept; []: reject).",
    )


class ReviewOutcome(BaseModel):
    """What answering a proposal did."""

    outcome: Literal["applied", "rejected"]
    version: int
    """The workflow's version now (the new one when something was applied)."""
    message: str
    """What was and was not applied, in words."""
    workflow: Workflow | None = None
    """The workflow as committed, when something was applied."""


class Turn(BaseModel):
    """A turn of the session: how it ended, where it was routed, what it used and cost."""

    id: str
    status: str
    route: str | None
    error_code: str | None
    tool_rounds: int
    duration_ms: int | None
    usage: TurnUsage
    """Totals over every model call of the turn (router, planner, code sub-agents), and
    each call; the same object ``turn.completed`` carries."""
    prompts: dict[str, PromptUse]
    """Each prompt template the turn used, by role."""
    created_at: datetime


class Confirmation(ConfirmationFields):
    """A question a turn asked, and its answer (``approved`` is null until answered;
    it stays null when a new message superseded the question)."""


class SessionDetail(Session):
    messages: list[Message]
    workflow: Workflow | None
    """The session's workflow as it is now; ``None`` on a project session."""
    pending_confirmation: PendingConfirmation | None = None
    confirmations: list[Confirmation] = Field(default_factory=list)
    turns: list[Turn] = Field(default_factory=list)


class CreateProject(_Body):
    name: ClientText | None = Field(
        None,
        max_length=100,
        description="None: the name the yaml gives its project, else 'Untitled project'.",
    )
    yaml: ClientText | None = Field(
        None,
        description="A Lightning project.yaml: every workflow in it joins the project, all "
        "or nothing (a bad field fails the whole request, naming the field). None: an "
        "empty project.",
    )


class ProjectWorkflow(BaseModel):
    """One workflow of a project, in project order (read it with /v1/workflows/{id})."""

    id: str
    name: str
    version: int
    position: int
    updated_at: datetime
    problems: list[str] = Field(default_factory=list)
    """Blocking problems found when it was imported (only in the POST response)."""


class ProjectSummary(BaseModel):
    id: str
    name: str
    workflow_count: int
    created_at: datetime
    updated_at: datetime


class Project(BaseModel):
    id: str
    name: str
    workflows: list[ProjectWorkflow]
    plan: PlanRecord | None = Field(
        None,
        description="The project's plan (DESIGN §5a): the latest proposal, the contracts "
        "between its workflows, review and build status; null until one is proposed.",
    )
    created_at: datetime
    updated_at: datetime
