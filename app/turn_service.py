"""What workflow turns (:mod:`app.turns`) and plan turns (:mod:`app.plan_turns`) share:
starting a run and relaying it, and answering a paused turn's confirmation.

A turn's request goes through ``agents`` once: the service records the turn, builds its
runtime, hands both to its :class:`~agents.engine.TurnEngine` (``start`` or ``resume``)
and relays the events that come back (:func:`app.turn_records.relay_events`). An answer
is recorded before anything acts on it; an answer the project or workflow moved past
meanwhile closes the turn as ``stale_confirmation`` with nothing done. A subclass says
what a turn works on (:meth:`TurnServiceBase.where`), how it is locked, whether an
answer is still fresh and what a resumed run's runtime is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from agents.api import RecordsCalls, TurnEngine, TurnRun
from app.auth import Principal
from app.store import SessionRecord, Store, TurnRecord
from app.turn_lock import TurnLocking
from app.turn_records import AT_LAST_VERSION, Send, finished_if_setup_fails, relay_events
from app.ws.protocol import ServerFrame, TurnStartedFrame, error_frame

R = TypeVar("R", bound=RecordsCalls)
"""A run's runtime (``TurnRuntime``, ``PlanRuntime``)."""
F = TypeVar("F")
"""What :meth:`TurnServiceBase.check_fresh` found (the workflow's head, say)."""


class StaleAnswer(Exception):
    """The answer came too late: what the turn paused on changed meanwhile."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Once:
    """A paused turn's checkpointed state, read at most once, when first wanted."""

    def __init__(self, fetch: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        self._fetch = fetch
        self._value: dict[str, Any] | None = None

    @classmethod
    def of(cls, value: dict[str, Any]) -> Once:
        once = cls(_unreachable)
        once._value = value
        return once

    async def __call__(self) -> dict[str, Any]:
        if self._value is None:
            self._value = await self._fetch()
        return self._value


async def _unreachable() -> dict[str, Any]:  # pragma: no cover - Once.of never fetches
    raise AssertionError("the state was given")


def nothing_waiting(request_id: str) -> ServerFrame:
    return error_frame("no_pending_confirmation", f"Nothing is waiting for {request_id!r}.")


class TurnServiceBase(TurnLocking, Generic[R, F]):
    """Starts, relays, answers and resumes one kind of turn."""

    store: Store
    engine: TurnEngine
    """Starts and resumes this kind of turn's graph, traced (``agents.api``)."""

    lock_what: ClassVar[str] = "workflow"
    """What a busy lock is said to be on (``busy`` frames)."""
    lock_subject: ClassVar[str] = "turn"
    """What failed, in ``cancelled``/``internal_error`` frames."""
    lock_cancelled: ClassVar[str] = AT_LAST_VERSION
    """What a cancelled run leaves behind, said after it."""
    tags: ClassVar[tuple[str, ...]] = ()
    """Trace tags of every run."""

    # --- what a subclass says ---------------------------------------------------

    async def where(self, session: SessionRecord) -> str:
        """What ``session``'s turns work on (a workflow id, a project id)."""
        raise NotImplementedError

    def lock_key(self, where: str) -> str:
        """The turn-lock key of ``where``."""
        return where

    def refuse_answer(self, pending: Mapping[str, Any]) -> ServerFrame | None:
        """An error frame when a confirmation's answer is not how ``pending`` is answered."""
        return None

    async def still_paused(self, session: SessionRecord, turn_id: str) -> bool:
        """Checked under the lock before an answer is recorded."""
        return True

    async def check_fresh(
        self, session: SessionRecord, where: str, turn_id: str, request_id: str, state: Once
    ) -> F:
        """What the resumed run starts from; raise :class:`StaleAnswer` when it moved on."""
        raise NotImplementedError

    async def resumed_runtime(
        self, session: SessionRecord, principal: Principal, where: str, fresh: F
    ) -> R:
        """A resumed run's runtime."""
        raise NotImplementedError

    def after_run(self, where: str, runtime: R) -> None:
        """Once a resumed run is relayed (keep its document warm, say)."""

    # --- shared -----------------------------------------------------------------

    async def start_run(
        self,
        turn: Mapping[str, Any],
        session: SessionRecord,
        principal: Principal,
        send: Send,
        runtime: Callable[[], Awaitable[R]],
    ) -> tuple[ServerFrame | None, R]:
        """Run the recorded ``turn`` and relay it; returns its last frame (sent by the
        caller once the lock is released) and its runtime. A failure before the run
        starts finishes the turn (``setup_failed``)."""
        turn_id = turn["turn_id"]
        async with finished_if_setup_fails(self.store, turn_id):
            await send(TurnStartedFrame(turn_id=turn_id))
            run: TurnRun[R] = self.engine.start(
                turn,
                await runtime(),
                session_id=session.id,
                user_id=principal.subject,
                tags=self.tags,
            )
        return await self.relay(run, turn_id, session, send), run.runtime

    async def resume_run(
        self,
        turn_id: str,
        session: SessionRecord,
        principal: Principal,
        send: Send,
        runtime: Callable[[], Awaitable[R]],
        *,
        approved: bool,
        state: Once,
        tags: Sequence[str],
        feedback: str | None = None,
        answer: Callable[[], Awaitable[dict[str, Any]]] | None = None,
    ) -> tuple[ServerFrame | None, R]:
        """Resume paused turn ``turn_id`` (its answer recorded) and relay it; the turn's
        totals include the model calls stored before the pause."""
        await self.store.update_turn_status(turn_id, "running")
        async with finished_if_setup_fails(self.store, turn_id):
            values = await state()
            built = await runtime()
            earlier = await self.store.list_model_calls(turn_id)
            run: TurnRun[R] = self.engine.resume(
                turn_id,
                values,
                built,
                approved=approved,
                session_id=session.id,
                user_id=principal.subject,
                tags=(*self.tags, *tags),
                earlier=[c.usage() for c in earlier],
                feedback=feedback,
                answer=None if answer is None else await answer(),
            )
        return await self.relay(run, turn_id, session, send), run.runtime

    async def relay(
        self, run: TurnRun[R], turn_id: str, session: SessionRecord, send: Send
    ) -> ServerFrame | None:
        """A run's events relayed and recorded: :func:`app.turn_records.relay_events`."""
        return await relay_events(self.store, run.events, turn_id, session, send, run.usage)

    async def answer(
        self,
        session: SessionRecord,
        principal: Principal,
        request_id: str,
        approved: bool,
        send: Send,
        *,
        feedback: str | None = None,
    ) -> None:
        """Answer the confirmation ``request_id`` the session's paused turn waits for."""
        turn = await self.store.paused_turn(session.id)
        await self.answer_paused(turn, session, principal, request_id, approved, send, feedback)

    async def answer_paused(
        self,
        turn: TurnRecord | None,
        session: SessionRecord,
        principal: Principal,
        request_id: str,
        approved: bool,
        send: Send,
        feedback: str | None,
    ) -> None:
        """:meth:`answer` once the session's paused ``turn`` is known."""
        pending = await self.engine.pending(turn.id) if turn else None
        if turn is None or pending is None or pending["request_id"] != request_id:
            await send(nothing_waiting(request_id))
            return
        refusal = self.refuse_answer(pending)
        if refusal is not None:
            await send(refusal)
            return
        await self.resume(
            session, principal, turn.id, approved, send, request_id=request_id, feedback=feedback
        )

    async def resume(
        self,
        session: SessionRecord,
        principal: Principal,
        turn_id: str,
        approved: bool,
        send: Send,
        *,
        request_id: str,
        feedback: str | None = None,
    ) -> None:
        """Record the answer to paused turn ``turn_id`` and resume it, under its lock."""
        where = await self.where(session)

        async def work() -> ServerFrame | None:
            if not await self.still_paused(session, turn_id):
                return nothing_waiting(request_id)
            # The answer is on record before anything acts on it.
            await self.store.answer_confirmation(
                turn_id,
                request_id,
                approved=approved,
                answered_by=principal.author,
                feedback=feedback,
            )
            state = Once(lambda: self.engine.state(turn_id))
            try:
                fresh = await self.check_fresh(session, where, turn_id, request_id, state)
            except StaleAnswer as stale:
                await self.store.finish_turn(turn_id, status="failed", error_code="stale")
                await self.engine.forget(turn_id)
                return error_frame("stale_confirmation", stale.message, turn_id)
            last, runtime = await self.resume_run(
                turn_id,
                session,
                principal,
                send,
                lambda: self.resumed_runtime(session, principal, where, fresh),
                approved=approved,
                state=state,
                tags=["resumed"],
                feedback=feedback,
            )
            self.after_run(where, runtime)
            return last

        await self.under_lock(
            self.lock_key(where),
            send,
            work,
            what=self.lock_what,
            subject=self.lock_subject,
            doing="resume",
            turn_id=turn_id,
            cancelled=self.lock_cancelled,
        )
