"""The tables. The schema itself is created by the Alembic migrations, never by
``create_all``; a test checks that the migrations and these models agree.

Timestamps are timezone-aware UTC on the way in and out, on SQLite as well
(:class:`UTCDateTime`). Constraint names follow the metadata naming convention,
so later migrations can drop or alter them by name on every backend.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import (
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
# Must be set before the tables below are declared: names are computed when
# constraints attach to their tables.
SQLModel.metadata.naming_convention = NAMING_CONVENTION
metadata: MetaData = SQLModel.metadata

MessageRole = Literal["user", "assistant"]
TurnStatus = Literal["running", "paused", "completed", "failed", "cancelled"]
ROLES: tuple[MessageRole, ...] = ("user", "assistant")
TURN_STATUSES: tuple[TurnStatus, ...] = ("running", "paused", "completed", "failed", "cancelled")
MODEL_ROLES: tuple[str, ...] = ("router", "planner", "job_code")


class UTCDateTime(TypeDecorator[datetime]):
    """``TIMESTAMP WITH TIME ZONE`` that refuses naive values and always returns UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTCDateTime column")
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        # SQLite stores no offset; the value was written as UTC.
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Project(SQLModel, table=True):
    """A set of workflows: one Lightning project (DESIGN §5a)."""

    __tablename__ = "projects"

    id: str = Field(primary_key=True)
    name: str
    owner: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    """When its set of workflows (or its plan) last changed (a workflow's own edits do
    not count)."""
    plan: str | None = Field(default=None, sa_type=Text)
    """The project's plan record as JSON (``tools.plan.PlanRecord``); ``None`` until one
    is proposed."""
    credentials: str | None = Field(default=None, sa_type=Text)
    """The project's credentials as JSON (``tools.credentials.ProjectCredentials``: names,
    schemas, non-secret fields); ``None`` until set."""


class Workflow(SQLModel, table=True):
    __tablename__ = "workflows"
    __table_args__ = (UniqueConstraint("project_id", "position"),)

    id: str = Field(primary_key=True)
    project_id: str = Field(foreign_key="projects.id", ondelete="CASCADE", index=True)
    """The one project the workflow belongs to."""
    position: int = 0
    """Its place in the project (0 first): the order of a project's workflows and its export."""
    name: str
    yaml: str = Field(sa_type=Text)
    version: int
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    owner: str | None = None


class WorkflowVersion(SQLModel, table=True):
    __tablename__ = "workflow_versions"
    __table_args__ = (UniqueConstraint("workflow_id", "version"),)

    id: int | None = Field(default=None, primary_key=True)
    workflow_id: str = Field(foreign_key="workflows.id", ondelete="CASCADE", index=True)
    version: int
    yaml: str = Field(sa_type=Text)
    author: str | None = None
    session_id: str | None = None
    turn_id: str | None = None
    tool: str | None = None
    summary: str = Field(default="", sa_type=Text)
    created_at: datetime = Field(sa_type=UTCDateTime)


class ChatSession(SQLModel, table=True):
    __tablename__ = "chat_sessions"

    id: str = Field(primary_key=True)
    workflow_id: str | None = Field(
        default=None, foreign_key="workflows.id", ondelete="CASCADE", index=True
    )
    """The workflow a turn of this session edits; ``None`` on a project session, whose
    turns are plan turns over the whole project."""
    read_only: bool = False
    owner: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    project_id: str | None = Field(
        default=None, foreign_key="projects.id", ondelete="CASCADE", index=True
    )
    """Set on a session opened on a project (plan mode's sessions); ``None`` on a
    session opened on one workflow."""
    review: bool = False
    """Its turns work on a draft and end with a proposal to accept (DESIGN §5c)."""


class Message(SQLModel, table=True):
    __tablename__ = "messages"
    __table_args__ = (CheckConstraint(_in("role", ROLES), name="role"),)

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(foreign_key="chat_sessions.id", ondelete="CASCADE", index=True)
    role: str
    content: str = Field(sa_type=Text)
    turn_id: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)


class Turn(SQLModel, table=True):
    __tablename__ = "turns"
    __table_args__ = (CheckConstraint(_in("status", TURN_STATUSES), name="status"),)

    id: str = Field(primary_key=True)
    session_id: str = Field(foreign_key="chat_sessions.id", ondelete="CASCADE", index=True)
    workflow_id: str | None = Field(
        default=None, foreign_key="workflows.id", ondelete="CASCADE", index=True
    )
    """The workflow the turn edits; ``None`` for a plan turn (its builds are versions of
    the project's workflows, each naming this turn)."""
    route: str | None = None
    status: str
    tool_rounds: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    duration_ms: int | None = None
    prompt_versions: str = Field(default="{}", sa_type=Text)
    error_code: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)
    updated_at: datetime = Field(sa_type=UTCDateTime)
    # Totals over the turn's model_calls rows (kept with the turn so listing turns
    # needs no aggregate query); the token counts above are their input/output sums.
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = Field(default=0.0, sa_type=Float)
    """NULL when a call's model had no price."""
    prompts: str = Field(default="{}", sa_type=Text)
    """JSON: each prompt template the turn used, by role: ``{name, version, hash}``."""


class ModelCall(SQLModel, table=True):
    """One model call of a turn (DESIGN §5b), in the order the calls returned."""

    __tablename__ = "model_calls"
    __table_args__ = (
        UniqueConstraint("turn_id", "seq"),
        CheckConstraint(_in("role", MODEL_ROLES), name="role"),
    )

    id: int | None = Field(default=None, primary_key=True)
    turn_id: str = Field(foreign_key="turns.id", ondelete="CASCADE", index=True)
    seq: int
    role: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = Field(default=None, sa_type=Float)
    prompt_name: str | None = None
    prompt_version: str | None = None
    prompt_hash: str | None = None
    error: str | None = None
    created_at: datetime = Field(sa_type=UTCDateTime)


class Confirmation(SQLModel, table=True):
    """A question a turn paused on, and its answer: who, when, yes or no, feedback.

    Kept with the turn for the record; the checkpointer only holds what a paused
    turn needs to resume and forgets it when the turn ends.
    """

    __tablename__ = "confirmations"
    __table_args__ = (UniqueConstraint("turn_id", "request_id"),)

    id: int | None = Field(default=None, primary_key=True)
    turn_id: str = Field(foreign_key="turns.id", ondelete="CASCADE", index=True)
    session_id: str = Field(foreign_key="chat_sessions.id", ondelete="CASCADE", index=True)
    request_id: str
    question: str = Field(sa_type=Text)
    asked_at: datetime = Field(sa_type=UTCDateTime)
    approved: bool | None = None
    """NULL until answered (and for good when a new message superseded it)."""
    answered_by: str | None = None
    """The answering principal's author name (a token's name or opaque label)."""
    answered_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    feedback: str | None = Field(default=None, sa_type=Text)
    """What the user said with the answer, if anything."""


class TestRunRow(SQLModel, table=True):
    """One test run of a workflow in OpenFn's runtime (DESIGN §5c): the version it ran
    and what it reported (``result``: the :class:`agents.testrun.model.TestRun` JSON,
    never a credential)."""

    __tablename__ = "test_runs"
    __test__ = False

    id: str = Field(primary_key=True)
    workflow_id: str = Field(foreign_key="workflows.id", ondelete="CASCADE", index=True)
    version: int
    status: str
    session_id: str | None = None
    turn_id: str | None = None
    created_by: str | None = None
    result: str = Field(sa_type=Text)
    created_at: datetime = Field(sa_type=UTCDateTime)


def table(model: type[SQLModel]) -> Table:
    """The Core ``Table`` of a model (the repository queries through Core)."""
    t = model.__table__  # type: ignore[attr-defined]
    assert isinstance(t, Table)
    return t


projects = table(Project)
workflows = table(Workflow)
workflow_versions = table(WorkflowVersion)
chat_sessions = table(ChatSession)
messages = table(Message)
turns = table(Turn)
model_calls = table(ModelCall)
confirmations = table(Confirmation)
test_runs = table(TestRunRow)
