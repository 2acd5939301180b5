"""The test-run queries of the :class:`~app.store.repository.Store`, as a mixin.

A test run (DESIGN §5c) is stored once, when it has finished, with the version it
ran, who ran it and the session and turn it came from; ``result`` is the run's JSON
(:class:`tools.testrun.TestRun`), which the service has already cleared of every
credential value (:mod:`app.runs`). Mixed into the Store, which provides the write
engine and the read helpers.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from sqlalchemy import Executable, RowMapping, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.errors import NotFoundError
from app.store.models import test_runs, workflows
from app.store.records import TestRunRecord
from tools.testrun import TestRun

__all__ = ["RunQueries"]


class RunQueries:
    """Storing and reading test runs; mixed into the Store, which provides these:"""

    _writer: AsyncEngine
    _clock: Callable[[], datetime]
    _first: Callable[[Executable], Awaitable[RowMapping | None]]
    _all: Callable[[Executable], Awaitable[Sequence[RowMapping]]]

    async def save_test_run(
        self,
        run: TestRun,
        *,
        session_id: str | None = None,
        turn_id: str | None = None,
    ) -> TestRunRecord:
        """Store a finished run (its ``workflow_id`` and ``version`` must be set), stamped
        with the store's clock as ``created_at``; the record holds the stamped run.
        :class:`NotFoundError` when the workflow no longer exists."""
        if run.workflow_id is None or run.version is None:
            raise ValueError("a stored run names its workflow and version")
        now = self._clock()
        run = run.model_copy(update={"created_at": now.isoformat()})
        row = {
            "id": run.run_id,
            "workflow_id": run.workflow_id,
            "version": run.version,
            "status": run.status,
            "session_id": session_id,
            "turn_id": turn_id,
            "created_by": run.created_by,
            # json.dumps, not pydantic: it spells NUL as \u0000, which Postgres text holds.
            "result": json.dumps(run.model_dump(mode="json"), ensure_ascii=False),
        }
        values = {**row, "created_at": now}
        try:
            async with self._writer.begin() as conn:
                found = await conn.scalar(
                    select(workflows.c.id).where(workflows.c.id == run.workflow_id)
                )
                if found is None:
                    raise NotFoundError(
                        f"There is no workflow {run.workflow_id!r}.", workflow_id=run.workflow_id
                    )
                await conn.execute(insert(test_runs).values(values))
        except IntegrityError as exc:  # the workflow was deleted meanwhile (foreign key)
            raise NotFoundError(
                f"There is no workflow {run.workflow_id!r}.", workflow_id=run.workflow_id
            ) from exc
        return TestRunRecord.model_validate({**values, "run": run})

    async def get_test_run(self, run_id: str) -> TestRunRecord | None:
        row = await self._first(select(test_runs).where(test_runs.c.id == run_id))
        return None if row is None else TestRunRecord.from_row(row)

    async def list_test_runs(self, workflow_id: str, *, limit: int) -> list[TestRunRecord]:
        """The workflow's runs, newest first, at most ``limit`` (empty for an unknown one)."""
        query = (
            select(test_runs)
            .where(test_runs.c.workflow_id == workflow_id)
            .order_by(test_runs.c.created_at.desc(), test_runs.c.id.desc())
            .limit(limit)
        )
        return [TestRunRecord.from_row(r) for r in await self._all(query)]

    async def last_session_run(self, session_id: str, workflow_id: str) -> TestRunRecord | None:
        """The newest run of ``workflow_id`` started from session ``session_id``."""
        query = (
            select(test_runs)
            .where(test_runs.c.session_id == session_id, test_runs.c.workflow_id == workflow_id)
            .order_by(test_runs.c.created_at.desc(), test_runs.c.id.desc())
            .limit(1)
        )
        row = await self._first(query)
        return None if row is None else TestRunRecord.from_row(row)
