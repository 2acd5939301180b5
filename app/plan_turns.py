"""Running plan turns for the service (DESIGN §5a): a project session's turns, and any
turn sent with ``"mode": "plan"``.

A plan turn holds its project's plan lock (one plan turn per project, across
workers) for as long as it runs, and each workflow's own turn lock while a
build changes it, so a build never interleaves with a turn on that workflow.
It is recorded, relayed and resumed exactly like a workflow turn (the shared
parts are :class:`app.turn_service.TurnServiceBase`'s): the review is a confirmation
stored with the turn and a checkpointed pause; the plan record is stored on
the project before every frame about it (:class:`StoreWorkspace`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from agents.api import (
    MessageTooLongError,
    OpenWorkflow,
    PlanInput,
    PlanRuntime,
    TurnEngine,
    check_message,
)
from app.auth import Principal
from app.bus.base import TurnLock
from app.bus.memory import BusUnavailableError
from app.errors import ConflictError, NotFoundError
from app.publishing import Publisher, StoreCommitter
from app.store import SessionRecord, Store
from app.turn_records import finished_if_setup_fails, record_start
from app.turn_service import Once, StaleAnswer, TurnServiceBase
from app.turns import Send, TurnRequest, TurnService
from app.ws.protocol import ServerFrame, error_frame
from tools.document import WorkflowDocument
from tools.document.openfn.ids import slugify
from tools.errors import PlanwrightError
from tools.plan import PlanRecord

log = logging.getLogger(__name__)
_AT_PLAN = " Workflows built so far stay as they are."


def plan_lock_key(project_id: str) -> str:
    """The turn-lock key of a project's plan turns (never a workflow id: those are hex)."""
    return f"plan:{project_id}"


class StoreWorkspace:
    """The project a plan turn works in, over the store, the publisher and the locks."""

    def __init__(
        self,
        *,
        store: Store,
        publisher: Publisher,
        lock: TurnLock,
        project_id: str,
        session_id: str,
        author: str,
        lock_ttl_s: float,
    ) -> None:
        self.store, self.publisher, self.lock = store, publisher, lock
        self.project_id, self.session_id, self.author = project_id, session_id, author
        self.lock_ttl_s = lock_ttl_s

    async def save_plan(self, record: PlanRecord) -> None:
        await self.store.save_plan(self.project_id, record)

    async def open_workflow(self, workflow_id: str | None, name: str) -> OpenWorkflow:
        record = await self.store.get_workflow(workflow_id) if workflow_id else None
        if record is None or record.project_id != self.project_id:
            yaml = WorkflowDocument.new(name=name).to_yaml()
            record = await self.store.create_workflow(
                name=name,
                yaml=yaml,
                project_id=self.project_id,
                author=self.author,
                tool="plan",
                summary="Created by the project's plan",
            )
        committer = StoreCommitter(self.publisher, record.id, self.session_id, self.author)
        return OpenWorkflow(record.id, record.yaml, record.version, committer)

    @contextlib.asynccontextmanager
    async def hold(self, workflow_id: str) -> AsyncIterator[None]:
        try:
            handle = await self.lock.acquire(workflow_id, ttl_s=self.lock_ttl_s)
        except Exception as exc:  # Redis unreachable: this build fails, not the plan turn
            log.warning("could not take the turn lock of %s: %r", workflow_id, exc)
            raise BusUnavailableError(
                "The workflow could not be locked for building (the event bus is "
                "unavailable); try the plan again shortly."
            ) from exc
        if handle is None:
            raise ConflictError(
                "Another turn is running on this workflow, so the plan could not build it.",
                code="busy",
            )
        try:
            yield
        finally:
            try:
                await handle.release()
            except Exception as exc:  # it expires with its TTL
                log.warning("could not release the turn lock of %s: %r", workflow_id, exc)


class PlanTurnService(TurnServiceBase[PlanRuntime, None]):
    """Starts plan turns and answers every confirmation (a workflow turn's goes to the turn
    service); recording, relaying and resuming are :class:`TurnServiceBase`'s."""

    lock_what = "project"
    lock_subject = "plan turn"
    lock_cancelled = _AT_PLAN
    tags = ("plan",)

    def __init__(
        self,
        turns: TurnService,
        engine: TurnEngine,
        workflow_graph: CompiledStateGraph[Any, Any, Any, Any],
    ) -> None:
        self.turns, self.engine, self.workflow_graph = turns, engine, workflow_graph
        self.store, self.lock = turns.store, turns.lock
        self.lock_ttl_s, self.max_queue = turns.lock_ttl_s, turns.max_queue

    async def project_of(self, session: SessionRecord) -> str:
        """The project a plan turn of ``session`` plans: the session's, or its workflow's."""
        if session.project_id is not None:
            return session.project_id
        assert session.workflow_id is not None  # a session is on a workflow or a project
        workflow = await self.store.get_workflow(session.workflow_id)
        if workflow is None:
            raise NotFoundError("The workflow no longer exists.")
        return workflow.project_id

    def _runtime(
        self, session: SessionRecord, principal: Principal, project_id: str
    ) -> PlanRuntime:
        turns = self.turns
        workspace = StoreWorkspace(
            store=turns.store,
            publisher=turns.publisher,
            lock=turns.lock,
            project_id=project_id,
            session_id=session.id,
            author=principal.author,
            lock_ttl_s=turns.lock_ttl_s,
        )
        return PlanRuntime(
            models=turns.models,
            workspace=workspace,
            workflow_graph=self.workflow_graph,
            clock=turns.store.now,
            config=turns.config,
            tools=turns.tools,
            prompt_loader=turns.prompt_loader,
            tokens=turns.tokens,
        )

    async def run(self, request: TurnRequest, send: Send, *, mode: str | None) -> None:
        session = request.session
        try:
            await check_message(
                request.content, self.turns.config.max_message_tokens, self.turns.tokens
            )
            project_id = await self.project_of(session)
        except (MessageTooLongError, PlanwrightError) as exc:
            await send(error_frame(exc.code, exc.message))
            return

        async def runtime() -> PlanRuntime:
            return self._runtime(session, request.principal, project_id)

        async def work() -> ServerFrame | None:
            turn = await self._begin(request, project_id, mode)
            last, _ = await self.start_run(turn, session, request.principal, send, runtime)
            return last

        await self.under_lock(
            plan_lock_key(project_id),
            send,
            work,
            what=self.lock_what,
            subject=self.lock_subject,
            cancelled=self.lock_cancelled,
        )

    async def _begin(self, request: TurnRequest, project_id: str, mode: str | None) -> PlanInput:
        store, session = self.store, request.session
        project = await store.require_project(project_id)
        workflows = await store.list_project_workflows(project_id)
        turn_id = self.turns.new_id()
        history = await record_start(
            store,
            self.engine,
            session,
            request.content,
            turn_id=turn_id,
            workflow_id=None,
            project_id=project_id,
            prompt_versions=dict(self.turns.config.prompt_versions),
            # We hold the project's plan lock: a plan turn still marked running died
            # with its worker.
            abandoned=await store.abandon_running_plan_turns(project_id),
        )
        async with finished_if_setup_fails(store, turn_id):
            record = await store.get_plan(project_id)
        return {
            "turn_id": turn_id,
            "project_id": project_id,
            "user_text": request.content,
            "mode": "plan" if mode == "plan" else None,
            "read_only": session.read_only or not request.principal.can_edit,
            "history": history,
            "project": {
                "name": project.name,
                "slug": slugify(project.name),
                "workflows": [{"id": w.id, "name": w.name} for w in workflows],
            },
            "record": None if record is None else record.model_dump(mode="json"),
        }

    async def pending(self, session_id: str) -> tuple[str, dict[str, Any]] | None:
        """The paused turn of the session and what it waits for, plan review or not."""
        turn = await self.store.paused_turn(session_id)
        if turn is None:
            return None
        engine = self.engine if turn.workflow_id is None else self.turns.engine
        pending = await engine.pending(turn.id)
        return None if pending is None else (turn.id, pending)

    # --- answering a confirmation (TurnServiceBase.answer) ------------------------

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
        """Answer whatever the session's paused turn waits for: a plan review resumes
        here, a workflow turn's confirmation in the turn service."""
        turn = await self.store.paused_turn(session.id)
        if turn is not None and turn.workflow_id is not None:
            await self.turns.answer(
                session, principal, request_id, approved, send, feedback=feedback
            )
            return
        # A plan turn, or nothing paused: a project session has no workflow turn to resume.
        await self.answer_paused(turn, session, principal, request_id, approved, send, feedback)

    async def where(self, session: SessionRecord) -> str:
        return await self.project_of(session)

    def lock_key(self, where: str) -> str:
        return plan_lock_key(where)

    async def still_paused(self, session: SessionRecord, turn_id: str) -> bool:
        # Checked again under the plan lock: a new message may have superseded the
        # turn since ``answer`` looked, or another session's review built the project.
        paused = await self.store.paused_turn(session.id)
        return paused is not None and paused.id == turn_id

    async def check_fresh(
        self, session: SessionRecord, where: str, turn_id: str, request_id: str, state: Once
    ) -> None:
        current = await self.store.get_plan(where)
        if current is None or current.request_id != request_id:
            raise StaleAnswer(
                "The project's plan changed while this was waiting (another review was "
                "answered or a newer plan proposed); nothing was built. Ask again."
            )

    async def resumed_runtime(
        self, session: SessionRecord, principal: Principal, where: str, fresh: None
    ) -> PlanRuntime:
        return self._runtime(session, principal, where)
