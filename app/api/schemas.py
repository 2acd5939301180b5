"""REST request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.events import TurnUsage
from agents.usage import PromptUse
from app.text import ClientText


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateWorkflow(_Body):
    name: ClientText | None = Field(None, max_length=100)
    yaml: ClientText | None = None


MAX_VERSION = 2**31 - 1


class ImportWorkflows(_Body):
    format: Literal["yaml", "lightning", "cli"] = Field(
        "yaml",
        description="yaml: a Planwright document; lightning: a Lightning project.yaml "
        "(one workflow per project workflow); cli: an OpenFn CLI workflow.json.",
    )
    content: ClientText = Field(description="The file's text.")


class PutWorkflow(_Body):
    yaml: ClientText
    # The next version must still fit the int32 column, so the maximum has no successor.
    expected_version: int = Field(ge=1, le=MAX_VERSION - 1)


class Revert(_Body):
    version: int = Field(ge=1, le=MAX_VERSION)


class Workflow(BaseModel):
    id: str
    name: str
    version: int
    yaml: str
    problems: list[str] = Field(default_factory=list)


class ImportedWorkflows(BaseModel):
    workflows: list[Workflow]


class WorkflowSummary(BaseModel):
    id: str
    name: str
    version: int
    updated_at: datetime


class Version(BaseModel):
    version: int
    author: str | None
    tool: str | None
    summary: str
    session_id: str | None
    turn_id: str | None
    created_at: datetime
    yaml: str | None = None


class CreateSession(_Body):
    workflow_id: ClientText
    read_only: bool = False


class Message(BaseModel):
    role: str
    content: str
    turn_id: str | None
    created_at: datetime


class Session(BaseModel):
    id: str
    workflow_id: str
    read_only: bool


class PendingConfirmation(BaseModel):
    turn_id: str
    request_id: str
    question: str


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


class SessionDetail(Session):
    messages: list[Message]
    workflow: Workflow
    pending_confirmation: PendingConfirmation | None = None
    turns: list[Turn] = Field(default_factory=list)
