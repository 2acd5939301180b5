"""The turn queries of the :class:`~app.store.repository.Store`, as a mixin it inherits.

A turn row is the agent's bookkeeping for one chat turn (status, route, token
counts, the prompt versions used), written by the turn runner rather than the
document endpoints; its queries are kept here so the repository module stays
about workflows, versions, sessions and messages. The mixin uses the Store's
write engine, clock and read helper, declared below for the type checker.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Executable, RowMapping, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agents.api import ModelCallUsage, PromptUse, TurnUsage
from app.errors import ConflictError, NotFoundError
from app.store.models import (
    TURN_STATUSES,
    TurnStatus,
    chat_sessions,
    model_calls,
    turns,
    workflows,
)
from app.store.records import ModelCallRecord, TurnRecord

__all__ = ["TurnQueries"]


class TurnQueries:
    """Recording, updating and finding turns; mixed into the Store, which provides these:"""

    _writer: AsyncEngine
    _clock: Callable[[], datetime]
    _first: Callable[[Executable], Awaitable[RowMapping | None]]
    _all: Callable[[Executable], Awaitable[Sequence[RowMapping]]]

    async def start_turn(
        self,
        turn_id: str,
        *,
        session_id: str,
        workflow_id: str | None,
        prompt_versions: Mapping[str, str] | None = None,
    ) -> TurnRecord:
        """Record a ``running`` turn. :class:`ConflictError` if ``turn_id`` is taken,
        :class:`NotFoundError` if the session or workflow does not exist."""
        now = self._clock()
        record = TurnRecord(
            id=turn_id,
            session_id=session_id,
            workflow_id=workflow_id,
            route=None,
            status="running",
            tool_rounds=0,
            input_tokens=0,
            output_tokens=0,
            duration_ms=None,
            prompt_versions=dict(prompt_versions or {}),
            error_code=None,
            created_at=now,
            updated_at=now,
        )
        row = record.model_dump()
        row["prompt_versions"] = json.dumps(record.prompt_versions, sort_keys=True)
        row["prompts"] = "{}"
        try:
            async with self._writer.begin() as conn:
                await conn.execute(insert(turns).values(row))
        except IntegrityError as exc:
            if await self.get_turn(turn_id) is not None:
                raise ConflictError(f"turn {turn_id!r} already exists", turn_id=turn_id) from exc
            raise NotFoundError(
                f"no session {session_id!r} for workflow {workflow_id!r}",
                session_id=session_id,
                workflow_id=workflow_id,
            ) from exc
        return record

    async def finish_turn(
        self,
        turn_id: str,
        *,
        status: TurnStatus,
        route: str | None = None,
        tool_rounds: int = 0,
        duration_ms: int | None = None,
        error_code: str | None = None,
        calls: Sequence[ModelCallUsage] = (),
        prompts: Mapping[str, PromptUse] | None = None,
    ) -> TurnRecord:
        """Set a turn's outcome (also ``paused``), adding the model ``calls`` of the run
        segment that just ended, in one transaction.

        The turn's token counts and cost are then recomputed from all of its stored
        calls (so a resumed turn's totals include what it spent before the pause).
        ``prompts`` are merged into the ones already recorded, and the role to version
        map ``prompt_versions`` follows them. ``route=None`` keeps the route already
        recorded."""
        _check_status(status)
        values: dict[str, Any] = {
            "status": status,
            "tool_rounds": tool_rounds,
            "duration_ms": duration_ms,
            "error_code": error_code,
            "updated_at": self._clock(),
        }
        if route is not None:
            values["route"] = route
        async with self._writer.begin() as conn:
            row = (
                (await conn.execute(select(turns.c.prompts).where(turns.c.id == turn_id)))
                .mappings()
                .first()
            )
            if row is None:
                raise NotFoundError(f"no turn {turn_id!r}", turn_id=turn_id)
            if calls:
                await _insert_calls(conn, turn_id, calls, self._clock())
            stored = await conn.execute(select(model_calls).where(model_calls.c.turn_id == turn_id))
            totals = TurnUsage.of([ModelCallRecord.from_row(r) for r in stored.mappings()])
            values.update(totals.model_dump(exclude={"calls"}))
            if prompts:
                merged = {**json.loads(row["prompts"] or "{}")}
                merged.update({role: p.model_dump() for role, p in prompts.items()})
                values["prompts"] = json.dumps(merged, sort_keys=True)
                values["prompt_versions"] = json.dumps(
                    {role: p["version"] for role, p in merged.items()}, sort_keys=True
                )
            statement = update(turns).where(turns.c.id == turn_id).values(values)
            updated = (await conn.execute(statement.returning(turns))).mappings().first()
        assert updated is not None
        return TurnRecord.from_row(updated)

    async def list_model_calls(self, turn_id: str) -> list[ModelCallRecord]:
        """The turn's model calls, in the order they returned."""
        query = (
            select(model_calls).where(model_calls.c.turn_id == turn_id).order_by(model_calls.c.seq)
        )
        return [ModelCallRecord.from_row(r) for r in await self._all(query)]

    async def list_session_model_calls(self, session_id: str) -> list[ModelCallRecord]:
        """Every model call of the session's turns, by turn and in order."""
        query = (
            select(model_calls)
            .join(turns, turns.c.id == model_calls.c.turn_id)
            .where(turns.c.session_id == session_id)
            .order_by(model_calls.c.turn_id, model_calls.c.seq)
        )
        return [ModelCallRecord.from_row(r) for r in await self._all(query)]

    async def list_turns(self, session_id: str) -> list[TurnRecord]:
        """The session's turns, oldest first."""
        query = (
            select(turns)
            .where(turns.c.session_id == session_id)
            .order_by(turns.c.created_at, turns.c.id)
        )
        return [TurnRecord.from_row(r) for r in await self._all(query)]

    async def update_turn_status(self, turn_id: str, status: TurnStatus) -> TurnRecord:
        """Change only the status (``paused`` at a confirmation, ``running`` on resume)."""
        _check_status(status)
        return await self._update_turn(turn_id, {"status": status})

    async def get_turn(self, turn_id: str) -> TurnRecord | None:
        row = await self._first(select(turns).where(turns.c.id == turn_id))
        return None if row is None else TurnRecord.from_row(row)

    async def paused_turn(self, session_id: str) -> TurnRecord | None:
        """The session's most recent ``paused`` turn (waiting for a confirmation), if any."""
        query = (
            select(turns)
            .where(turns.c.session_id == session_id, turns.c.status == "paused")
            .order_by(turns.c.created_at.desc(), turns.c.id.desc())
            .limit(1)
        )
        row = await self._first(query)
        return None if row is None else TurnRecord.from_row(row)

    async def abandon_running_turns(self, workflow_id: str) -> list[str]:
        """Mark the workflow's ``running`` turns failed (``abandoned``); returns their ids.

        Called by the holder of the workflow's turn lock: no other turn can be running,
        so a ``running`` row is one whose worker died mid-turn.
        """
        statement = (
            update(turns)
            .where(turns.c.workflow_id == workflow_id, turns.c.status == "running")
            .values(status="failed", error_code="abandoned", updated_at=self._clock())
            .returning(turns.c.id)
        )
        async with self._writer.begin() as conn:
            result = await conn.execute(statement)
            return list(result.scalars())

    async def abandon_running_plan_turns(self, project_id: str) -> list[str]:
        """Mark the project's ``running`` plan turns failed (``abandoned``): called by the
        holder of the project's plan lock, as :meth:`abandon_running_turns` is for a
        workflow's. A plan turn has no workflow; its session is on the project, or on
        one of the project's workflows."""
        sessions = select(chat_sessions.c.id).where(
            or_(
                chat_sessions.c.project_id == project_id,
                chat_sessions.c.workflow_id.in_(
                    select(workflows.c.id).where(workflows.c.project_id == project_id)
                ),
            )
        )
        statement = (
            update(turns)
            .where(
                turns.c.workflow_id.is_(None),
                turns.c.status == "running",
                turns.c.session_id.in_(sessions),
            )
            .values(status="failed", error_code="abandoned", updated_at=self._clock())
            .returning(turns.c.id)
        )
        async with self._writer.begin() as conn:
            result = await conn.execute(statement)
            return list(result.scalars())

    async def _update_turn(self, turn_id: str, values: dict[str, Any]) -> TurnRecord:
        values["updated_at"] = self._clock()
        statement = update(turns).where(turns.c.id == turn_id).values(values).returning(turns)
        async with self._writer.begin() as conn:
            row = (await conn.execute(statement)).mappings().first()
        if row is None:
            raise NotFoundError(f"no turn {turn_id!r}", turn_id=turn_id)
        return TurnRecord.from_row(row)


async def _insert_calls(
    conn: AsyncConnection, turn_id: str, calls: Sequence[ModelCallUsage], now: datetime
) -> None:
    """Append ``calls`` after the turn's stored ones (one turn runs at a time: the lock)."""
    last = await conn.scalar(
        select(func.max(model_calls.c.seq)).where(model_calls.c.turn_id == turn_id)
    )
    start = 0 if last is None else int(last) + 1
    rows = [
        {**call.model_dump(), "turn_id": turn_id, "seq": start + i, "created_at": now}
        for i, call in enumerate(calls)
    ]
    await conn.execute(insert(model_calls), rows)


def _check_status(status: str) -> None:
    if status not in TURN_STATUSES:
        raise ValueError(f"status must be one of {TURN_STATUSES}, not {status!r}")
