"""The confirmation queries of the :class:`~app.store.repository.Store`, as a mixin.

A turn that pauses on a question records it here before the question goes out;
the answer (who, when, yes or no, feedback) is recorded before the turn acts on
it. Mixed into the Store, which provides the write engine, clock and reader.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime

from sqlalchemy import Executable, RowMapping, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from app.errors import ConflictError
from app.store.models import confirmations
from app.store.records import ConfirmationRecord

__all__ = ["ConfirmationQueries"]


class ConfirmationQueries:
    """Recording questions and answers; mixed into the Store, which provides these:"""

    _writer: AsyncEngine
    _clock: Callable[[], datetime]
    _all: Callable[[Executable], Awaitable[Sequence[RowMapping]]]

    async def record_confirmation(
        self, turn_id: str, *, session_id: str, request_id: str, question: str
    ) -> None:
        """Record the question a turn is pausing on (once per request id)."""
        row = {
            "turn_id": turn_id,
            "session_id": session_id,
            "request_id": request_id,
            "question": question,
            "asked_at": self._clock(),
        }
        async with self._writer.begin() as conn:
            await conn.execute(insert(confirmations).values(row))

    async def answer_confirmation(
        self,
        turn_id: str,
        request_id: str,
        *,
        approved: bool,
        answered_by: str,
        feedback: str | None = None,
    ) -> None:
        """Record the answer; :class:`ConflictError` when the question is unknown or
        already answered (two devices answering at once: the first one counts)."""
        statement = (
            update(confirmations)
            .where(
                confirmations.c.turn_id == turn_id,
                confirmations.c.request_id == request_id,
                confirmations.c.approved.is_(None),
            )
            .values(
                approved=approved,
                answered_by=answered_by,
                answered_at=self._clock(),
                feedback=feedback,
            )
        )
        async with self._writer.begin() as conn:
            result = await conn.execute(statement)
        if not result.rowcount:
            raise ConflictError(
                f"Confirmation {request_id!r} is not waiting for an answer.",
                code="no_pending_confirmation",
            )

    async def list_confirmations(self, session_id: str) -> list[ConfirmationRecord]:
        """The session's questions and answers, oldest first."""
        query = (
            select(confirmations)
            .where(confirmations.c.session_id == session_id)
            .order_by(confirmations.c.asked_at, confirmations.c.id)
        )
        return [ConfirmationRecord.from_row(r) for r in await self._all(query)]
