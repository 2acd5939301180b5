"""The async repository: every read and write the service makes, as plain records.

Queries go through SQLAlchemy Core on the model tables, one short transaction
per call, and return the frozen pydantic records of :mod:`app.store.records`, so
nothing handed out is tied to a session. Transactions that write are opened with
:data:`WRITE_OPTIONS` (``BEGIN IMMEDIATE`` on SQLite) so concurrent writers queue
rather than fail. The turn queries are in :mod:`app.store.turn_queries`, a mixin
the :class:`Store` inherits.

The one subtle operation is :meth:`Store.commit_version`: a conditional
``UPDATE ... WHERE version = expected`` and the version-row ``INSERT`` in one
transaction. On Postgres a concurrent committer blocks on the row lock, then
re-checks the condition against the committed row and updates nothing, so exactly
one of several commits based on the same version wins; the unique
``(workflow_id, version)`` constraint backs this up.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Executable, RowMapping, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.errors import ConflictError, NotFoundError, VersionConflictError
from app.store.confirmations import ConfirmationQueries
from app.store.database import WRITE_OPTIONS
from app.store.models import (
    ROLES,
    MessageRole,
    chat_sessions,
    messages,
    projects,
    workflow_versions,
    workflows,
)
from app.store.project_queries import ProjectQueries
from app.store.records import (
    MessageRecord,
    ProjectRecord,
    SessionRecord,
    TurnRecord,
    VersionRecord,
    WorkflowRecord,
)
from app.store.run_queries import RunQueries
from app.store.turn_queries import TurnQueries

__all__ = [
    "MessageRecord",
    "ProjectRecord",
    "SessionRecord",
    "Store",
    "TurnRecord",
    "VersionRecord",
    "WorkflowRecord",
]


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _uuid() -> str:
    return str(uuid.uuid4())


_VERSION_COLUMNS = [c for c in workflow_versions.c if c.name not in ("id", "yaml")]


class Store(ProjectQueries, TurnQueries, ConfirmationQueries, RunQueries):
    """Persistence for projects, workflows, their versions, chat sessions, messages, turns
    and the confirmations turns asked for.

    ``now`` must return timezone-aware datetimes; ``new_id`` makes workflow and
    session ids. Both are injectable for tests.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        now: Callable[[], datetime] = _utcnow,
        new_id: Callable[[], str] = _uuid,
    ) -> None:
        self.engine = engine
        self._writer = engine.execution_options(**WRITE_OPTIONS)
        self._now = now
        self._new_id = new_id

    # -- workflows -----------------------------------------------------------------------

    async def create_workflow(
        self,
        *,
        name: str,
        yaml: str,
        project_id: str | None = None,
        author: str | None = None,
        owner: str | None = None,
        tool: str = "create",
        summary: str = "Created the workflow",
    ) -> WorkflowRecord:
        """A new workflow at version 1 (and its version row), in project ``project_id`` or
        else in a new project of its own. ``owner`` defaults to ``author``; pass
        ``tool="import"`` for an imported document."""
        (record,) = await self.create_workflows(
            [(name, yaml)],
            project_id=project_id,
            author=author,
            owner=owner,
            tool=tool,
            summary=summary,
        )
        return record

    async def create_workflows(
        self,
        documents: Sequence[tuple[str, str]],
        *,
        project_id: str | None = None,
        project_name: str | None = None,
        author: str | None = None,
        owner: str | None = None,
        tool: str = "create",
        summary: str = "Created the workflow",
    ) -> list[WorkflowRecord]:
        """New workflows from ``(name, yaml)`` pairs, all in one transaction: an import of a
        project with several workflows creates all of them or none.

        They join project ``project_id`` after its last workflow (:class:`NotFoundError`
        when it does not exist); without one, a new project holds them all, named
        ``project_name`` or else after the first workflow."""
        owner = owner if owner is not None else author
        now = self._clock()
        async with self._writer.begin() as conn:
            if project_id is None:
                name = project_name or (documents[0][0] if documents else "Untitled project")
                project_id = (await self._insert_project(conn, name=name, owner=owner, now=now)).id
                start = 0
            else:
                start = await self._claim_positions(conn, project_id, now)
            return await self._insert_workflows(
                conn,
                project_id,
                start,
                documents,
                author=author,
                owner=owner,
                tool=tool,
                summary=summary,
                now=now,
            )

    async def get_workflow(self, workflow_id: str) -> WorkflowRecord | None:
        row = await self._first(select(workflows).where(workflows.c.id == workflow_id))
        return None if row is None else WorkflowRecord.from_row(row)

    async def require_workflow(self, workflow_id: str) -> WorkflowRecord:
        """:meth:`get_workflow`, raising :class:`NotFoundError` when there is none."""
        record = await self.get_workflow(workflow_id)
        if record is None:
            raise NotFoundError(f"no workflow {workflow_id!r}", workflow_id=workflow_id)
        return record

    async def list_workflows(self, *, limit: int | None = None) -> list[WorkflowRecord]:
        """Newest first (by creation time)."""
        query = select(workflows).order_by(workflows.c.created_at.desc(), workflows.c.id.desc())
        if limit is not None:
            query = query.limit(limit)
        return [WorkflowRecord.from_row(r) for r in await self._all(query)]

    async def commit_version(
        self,
        workflow_id: str,
        *,
        yaml: str,
        expected_version: int,
        tool: str,
        name: str | None = None,
        author: str | None = None,
        session_id: str | None = None,
        turn_id: str | None = None,
        summary: str = "",
    ) -> int:
        """Make ``yaml`` (and ``name``, unless ``None``) the current document, as version
        ``expected_version + 1``, atomically with its version row.

        Raises :class:`VersionConflictError` (``current_version`` in its details) when
        the workflow is no longer at ``expected_version``, and :class:`NotFoundError`
        when it does not exist; either way nothing is written.
        """
        new_version = expected_version + 1
        now = self._clock()
        values: dict[str, Any] = {"yaml": yaml, "version": new_version, "updated_at": now}
        if name is not None:
            values["name"] = name
        try:
            async with self._writer.begin() as conn:
                result = await conn.execute(
                    update(workflows)
                    .where(workflows.c.id == workflow_id)
                    .where(workflows.c.version == expected_version)
                    .values(values)
                )
                if result.rowcount != 1:
                    current = await conn.scalar(
                        select(workflows.c.version).where(workflows.c.id == workflow_id)
                    )
                    if current is None:
                        raise NotFoundError(f"no workflow {workflow_id!r}", workflow_id=workflow_id)
                    raise _conflict(workflow_id, expected_version, current)
                await conn.execute(
                    insert(workflow_versions).values(
                        workflow_id=workflow_id,
                        version=new_version,
                        yaml=yaml,
                        author=author,
                        session_id=session_id,
                        turn_id=turn_id,
                        tool=tool,
                        summary=summary,
                        created_at=now,
                    )
                )
        except IntegrityError as exc:
            # Only the (workflow_id, version) uniqueness can fail here: a stray version
            # row written outside this method. Report it as the conflict it is.
            current = await self.get_workflow(workflow_id)
            version = None if current is None else current.version
            raise _conflict(workflow_id, expected_version, version) from exc
        return new_version

    # -- versions ------------------------------------------------------------------------

    async def list_versions(self, workflow_id: str) -> list[VersionRecord]:
        """History without the YAML, newest first (empty for an unknown workflow)."""
        query = (
            select(*_VERSION_COLUMNS)
            .where(workflow_versions.c.workflow_id == workflow_id)
            .order_by(workflow_versions.c.version.desc())
        )
        return [VersionRecord.from_row(r) for r in await self._all(query)]

    async def get_version(self, workflow_id: str, version: int) -> VersionRecord | None:
        """One version, with its YAML."""
        query = select(*_VERSION_COLUMNS, workflow_versions.c.yaml).where(
            workflow_versions.c.workflow_id == workflow_id,
            workflow_versions.c.version == version,
        )
        row = await self._first(query)
        return None if row is None else VersionRecord.from_row(row)

    # -- sessions and messages -----------------------------------------------------------

    async def create_session(
        self,
        *,
        workflow_id: str | None,
        read_only: bool,
        owner: str | None = None,
        project_id: str | None = None,
        review: bool = False,
    ) -> SessionRecord:
        """A session whose turns edit ``workflow_id``; with ``project_id``, a session on
        that project, which must hold the workflow (else :class:`ConflictError`). With
        ``project_id`` and no workflow, a project session: its turns are plan turns."""
        if workflow_id is None and project_id is None:
            raise ValueError("a session is on a workflow, a project, or both")
        record = SessionRecord(
            id=self._new_id(),
            workflow_id=workflow_id,
            project_id=project_id,
            read_only=read_only,
            owner=owner,
            created_at=self._clock(),
            review=review,
        )
        async with self._writer.begin() as conn:
            if workflow_id is None:
                found = await conn.scalar(select(projects.c.id).where(projects.c.id == project_id))
                if found is None:
                    raise NotFoundError(f"no project {project_id!r}", project_id=project_id)
            else:
                home = await conn.scalar(
                    select(workflows.c.project_id).where(workflows.c.id == workflow_id)
                )
                if home is None:
                    raise NotFoundError(f"no workflow {workflow_id!r}", workflow_id=workflow_id)
                if project_id is not None and home != project_id:
                    raise ConflictError(
                        f"workflow {workflow_id!r} is not in project {project_id!r}",
                        code="workflow_not_in_project",
                        workflow_id=workflow_id,
                        project_id=project_id,
                    )
            await conn.execute(insert(chat_sessions).values(record.model_dump()))
        return record

    async def get_session(self, session_id: str) -> SessionRecord | None:
        row = await self._first(select(chat_sessions).where(chat_sessions.c.id == session_id))
        return None if row is None else SessionRecord.from_row(row)

    async def add_message(
        self, session_id: str, role: MessageRole, content: str, turn_id: str | None = None
    ) -> MessageRecord:
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, not {role!r}")
        values = {
            "session_id": session_id,
            "role": role,
            "content": content,
            "turn_id": turn_id,
            "created_at": self._clock(),
        }
        try:
            async with self._writer.begin() as conn:
                result = await conn.execute(insert(messages).values(values))
                (message_id,) = result.inserted_primary_key or (None,)
        except IntegrityError as exc:
            raise NotFoundError(f"no session {session_id!r}", session_id=session_id) from exc
        return MessageRecord.model_validate({"id": message_id, **values})

    async def list_messages(self, session_id: str) -> list[MessageRecord]:
        """Oldest first (empty for an unknown session)."""
        query = select(messages).where(messages.c.session_id == session_id).order_by(messages.c.id)
        return [MessageRecord.from_row(r) for r in await self._all(query)]

    def now(self) -> datetime:
        """The store's clock (UTC): what it stamps records with."""
        return self._clock()

    # -- helpers -------------------------------------------------------------------------

    def _clock(self) -> datetime:
        now = self._now()
        if now.tzinfo is None:
            raise ValueError("the Store clock must return timezone-aware datetimes")
        return now.astimezone(UTC)

    async def _first(self, query: Executable) -> RowMapping | None:
        async with self.engine.connect() as conn:
            return (await conn.execute(query)).mappings().first()

    async def _all(self, query: Executable) -> Sequence[RowMapping]:
        async with self.engine.connect() as conn:
            return (await conn.execute(query)).mappings().all()


def _conflict(workflow_id: str, expected: int, current: int | None) -> VersionConflictError:
    return VersionConflictError(
        f"workflow {workflow_id!r} is at version {current}, not {expected}"
        if current is not None
        else f"workflow {workflow_id!r} has moved past version {expected}",
        workflow_id=workflow_id,
        expected_version=expected,
        current_version=current,
    )
