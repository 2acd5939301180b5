"""The project queries of the :class:`~app.store.repository.Store`, as a mixin it inherits.

A project (DESIGN §5a) is a set of workflows, one Lightning project; every
workflow belongs to exactly one, at a ``position`` that orders the project's
workflows (and its ``project.yaml``). Workflows are only ever created here,
together with their version-1 rows and, when none is named, a new project of
their own, in one transaction: a project imported with several workflows gets
all of them or none.

Adding to an existing project first touches the project row (``updated_at``),
which locks it on Postgres (SQLite's ``BEGIN IMMEDIATE`` locks the file), so two
concurrent additions take positions one after the other; the unique
``(project_id, position)`` constraint backs this up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from sqlalchemy import Executable, RowMapping, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.errors import NotFoundError
from app.store.models import projects, workflow_versions, workflows
from app.store.records import ProjectRecord, WorkflowRecord
from tools.credentials import STORED, ProjectCredentials
from tools.plan import PlanRecord

__all__ = ["ProjectQueries"]

_COUNT = (
    select(func.count())
    .where(workflows.c.project_id == projects.c.id)
    .correlate(projects)
    .scalar_subquery()
    .label("workflow_count")
)


class ProjectQueries:
    """Creating projects and their workflows, reading projects; mixed into the Store,
    which provides these:"""

    _writer: AsyncEngine
    _clock: Callable[[], datetime]
    _new_id: Callable[[], str]
    _first: Callable[[Executable], Awaitable[RowMapping | None]]
    _all: Callable[[Executable], Awaitable[Sequence[RowMapping]]]

    async def create_project(
        self,
        *,
        name: str,
        documents: Sequence[tuple[str, str]] = (),
        author: str | None = None,
        owner: str | None = None,
        tool: str = "import",
        summary: str = "Imported with the project",
    ) -> tuple[ProjectRecord, list[WorkflowRecord]]:
        """A new project holding a new workflow per ``(name, yaml)`` pair, in that order
        (none: an empty project), all in one transaction. ``owner`` defaults to ``author``."""
        owner = owner if owner is not None else author
        now = self._clock()
        async with self._writer.begin() as conn:
            project = await self._insert_project(conn, name=name, owner=owner, now=now)
            records = await self._insert_workflows(
                conn,
                project.id,
                0,
                documents,
                author=author,
                owner=owner,
                tool=tool,
                summary=summary,
                now=now,
            )
        return project.model_copy(update={"workflow_count": len(records)}), records

    async def get_project(self, project_id: str) -> ProjectRecord | None:
        row = await self._first(select(projects, _COUNT).where(projects.c.id == project_id))
        return None if row is None else ProjectRecord.from_row(row)

    async def require_project(self, project_id: str) -> ProjectRecord:
        """:meth:`get_project`, raising :class:`NotFoundError` when there is none."""
        record = await self.get_project(project_id)
        if record is None:
            raise NotFoundError(f"There is no project {project_id!r}.", project_id=project_id)
        return record

    async def get_plan(self, project_id: str) -> PlanRecord | None:
        """The project's plan record, ``None`` when it has none (or there is no project)."""
        raw = await self._first(select(projects.c.plan).where(projects.c.id == project_id))
        if raw is None or raw["plan"] is None:
            return None
        return PlanRecord.model_validate_json(raw["plan"])

    async def save_plan(self, project_id: str, record: PlanRecord) -> None:
        """Replace the project's plan record (:class:`NotFoundError` without the project)."""
        async with self._writer.begin() as conn:
            done = await conn.execute(
                update(projects)
                .where(projects.c.id == project_id)
                .values(plan=record.model_dump_json(), updated_at=self._clock())
            )
            if done.rowcount != 1:
                raise NotFoundError(f"no project {project_id!r}", project_id=project_id)

    async def get_credentials(self, project_id: str) -> ProjectCredentials:
        """The project's credentials (none when it has none, or there is no project)."""
        raw = await self._first(select(projects.c.credentials).where(projects.c.id == project_id))
        if raw is None or raw["credentials"] is None:
            return ProjectCredentials()
        # As kept: rows written under older rules still read (STORED skips the write rules).
        return ProjectCredentials.model_validate_json(raw["credentials"], context={STORED: True})

    async def save_credentials(self, project_id: str, credentials: ProjectCredentials) -> None:
        """Replace the project's credentials (:class:`NotFoundError` without the project)."""
        async with self._writer.begin() as conn:
            done = await conn.execute(
                update(projects)
                .where(projects.c.id == project_id)
                .values(
                    credentials=credentials.model_dump_json(by_alias=True, exclude_none=True),
                    updated_at=self._clock(),
                )
            )
            if done.rowcount != 1:
                raise NotFoundError(f"no project {project_id!r}", project_id=project_id)

    async def withdraw_proposal(self, project_id: str, turn_id: str) -> None:
        """Turn ``turn_id``'s review was superseded: if the project's plan is still that
        turn's proposal, it is marked rejected (no Approve left that nothing answers)."""
        record = await self.get_plan(project_id)
        if record is not None and record.status == "proposed" and record.turn_id == turn_id:
            withdrawn = record.model_copy(update={"status": "rejected", "request_id": None})
            await self.save_plan(project_id, withdrawn)

    async def list_projects(self, *, limit: int | None = None) -> list[ProjectRecord]:
        """Newest first (by creation time), each with its workflow count."""
        query = select(projects, _COUNT).order_by(
            projects.c.created_at.desc(), projects.c.id.desc()
        )
        if limit is not None:
            query = query.limit(limit)
        return [ProjectRecord.from_row(r) for r in await self._all(query)]

    async def list_project_workflows(self, project_id: str) -> list[WorkflowRecord]:
        """The project's workflows with their current YAML, in position order (empty for
        an unknown project)."""
        query = (
            select(workflows)
            .where(workflows.c.project_id == project_id)
            .order_by(workflows.c.position)
        )
        return [WorkflowRecord.from_row(r) for r in await self._all(query)]

    # -- inside a transaction ------------------------------------------------------------

    async def _insert_project(
        self, conn: AsyncConnection, *, name: str, owner: str | None, now: datetime
    ) -> ProjectRecord:
        record = ProjectRecord(
            id=self._new_id(), name=name, owner=owner, created_at=now, updated_at=now
        )
        await conn.execute(insert(projects).values(record.model_dump(exclude={"workflow_count"})))
        return record

    async def _claim_positions(self, conn: AsyncConnection, project_id: str, now: datetime) -> int:
        """The first free position in ``project_id``, with the project row locked
        (:class:`NotFoundError` when there is no such project)."""
        touched = await conn.execute(
            update(projects).where(projects.c.id == project_id).values(updated_at=now)
        )
        if touched.rowcount != 1:
            raise NotFoundError(f"no project {project_id!r}", project_id=project_id)
        last = await conn.scalar(
            select(func.max(workflows.c.position)).where(workflows.c.project_id == project_id)
        )
        return 0 if last is None else int(last) + 1

    async def _insert_workflows(
        self,
        conn: AsyncConnection,
        project_id: str,
        start: int,
        documents: Sequence[tuple[str, str]],
        *,
        author: str | None,
        owner: str | None,
        tool: str,
        summary: str,
        now: datetime,
    ) -> list[WorkflowRecord]:
        records = [
            WorkflowRecord(
                id=self._new_id(),
                project_id=project_id,
                position=start + index,
                name=name,
                version=1,
                yaml=yaml,
                owner=owner,
                created_at=now,
                updated_at=now,
            )
            for index, (name, yaml) in enumerate(documents)
        ]
        for record in records:
            await conn.execute(insert(workflows).values(record.model_dump()))
            await conn.execute(
                insert(workflow_versions).values(
                    workflow_id=record.id,
                    version=1,
                    yaml=record.yaml,
                    author=author,
                    tool=tool,
                    summary=summary,
                    created_at=now,
                )
            )
        return records
