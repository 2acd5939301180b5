"""The plain records the :class:`~app.store.repository.Store` hands out.

Every query returns frozen pydantic models built from the row, never ORM objects,
so nothing handed out is tied to a database session or can be changed behind the
store's back. They live apart from the queries so callers (and the turn queries in
:mod:`app.store.turn_queries`) can use the types without the whole repository.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Self

from pydantic import BaseModel, ConfigDict
from sqlalchemy import RowMapping

from agents.api import ModelCallUsage, PromptUse
from app.store.models import MessageRole, TurnStatus
from tools.testrun import TestRun

__all__ = [
    "ConfirmationFields",
    "ConfirmationRecord",
    "MessageRecord",
    "ModelCallRecord",
    "ProjectRecord",
    "SessionRecord",
    "TestRunRecord",
    "TurnRecord",
    "VersionFields",
    "VersionRecord",
    "WorkflowRecord",
]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True)

    @classmethod
    def from_row(cls, row: RowMapping) -> Self:
        return cls.model_validate(dict(row))


class ProjectRecord(_Record):
    """A project; ``workflow_count`` is how many workflows it holds when read."""

    id: str
    name: str
    owner: str | None
    created_at: datetime
    updated_at: datetime
    workflow_count: int = 0


class WorkflowRecord(_Record):
    id: str
    project_id: str
    position: int
    name: str
    version: int
    yaml: str
    owner: str | None
    created_at: datetime
    updated_at: datetime


class VersionFields(BaseModel):
    """What one version of a workflow says about itself: declared once, for the store's
    :class:`VersionRecord` and the API's ``Version`` (``app.api.schemas``) alike."""

    version: int
    author: str | None
    tool: str | None
    summary: str
    session_id: str | None
    turn_id: str | None
    created_at: datetime
    yaml: str | None = None


class VersionRecord(VersionFields, _Record):
    """One row of a workflow's history; ``yaml`` only from
    :meth:`~app.store.repository.Store.get_version`."""

    workflow_id: str


class SessionRecord(_Record):
    id: str
    workflow_id: str | None
    read_only: bool
    owner: str | None
    created_at: datetime
    project_id: str | None = None
    review: bool = False
    """Its turns end with a proposal to accept before anything lands (DESIGN §5c)."""


class MessageRecord(_Record):
    id: int
    session_id: str
    role: MessageRole
    content: str
    turn_id: str | None
    created_at: datetime


class TurnRecord(_Record):
    """A turn; its token counts and cost are the sums over its :class:`ModelCallRecord` rows."""

    id: str
    session_id: str
    workflow_id: str | None
    route: str | None
    status: TurnStatus
    tool_rounds: int
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = 0.0
    duration_ms: int | None
    prompt_versions: dict[str, str]
    prompts: dict[str, PromptUse] = {}
    error_code: str | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: RowMapping) -> Self:
        data = dict(row)
        data["prompt_versions"] = json.loads(data["prompt_versions"])
        data["prompts"] = json.loads(data.get("prompts") or "{}")
        return cls.model_validate(data)


class ModelCallRecord(ModelCallUsage):
    """One stored model call: its usage plus where it sits in its turn."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    turn_id: str
    seq: int
    created_at: datetime

    @classmethod
    def from_row(cls, row: RowMapping) -> Self:
        return cls.model_validate(dict(row))

    def usage(self) -> ModelCallUsage:
        """The call as the agents record it (what a resumed turn's ledger starts from)."""
        return ModelCallUsage.model_validate(self.model_dump(include=_CALL_FIELDS))


_CALL_FIELDS = set(ModelCallUsage.model_fields)


class ConfirmationFields(BaseModel):
    """A question a turn asked and its answer: declared once, for the store's
    :class:`ConfirmationRecord` and the API's ``Confirmation`` (``app.api.schemas``)."""

    turn_id: str
    request_id: str
    question: str
    asked_at: datetime
    approved: bool | None
    answered_by: str | None
    answered_at: datetime | None
    feedback: str | None


class ConfirmationRecord(ConfirmationFields, _Record):
    """A confirmation a turn asked for; ``approved`` is ``None`` until answered."""

    session_id: str


class TestRunRecord(_Record):
    """A stored test run: where it came from, and the run as every client reads it."""

    __test__ = False  # not a pytest class

    id: str
    workflow_id: str
    version: int
    """The workflow version it ran (a review-mode turn's draft was based on it)."""
    status: str
    session_id: str | None
    """The chat session it was started from (a ``run`` frame, the chat tool); ``None``
    for ``POST /v1/workflows/{id}/runs``."""
    turn_id: str | None
    """The turn whose ``test_run`` call started it, if one did."""
    created_by: str | None
    created_at: datetime
    run: TestRun
    """The run itself (``result``), never holding a credential value."""

    @classmethod
    def from_row(cls, row: RowMapping) -> Self:
        data = dict(row)
        data["run"] = TestRun.model_validate_json(data.pop("result"))
        return cls.model_validate(data)
