"""Running chat turns for the service: lock, graph, persistence, publication, frames.

One turn at a time per workflow (the bus's ``TurnLock``, across workers).
Each mutation is committed as a version row and published on the bus by
:class:`app.publishing.StoreCommitter` (through :class:`app.publishing.Publisher`,
the one writer) before the graph emits its ``workflow`` event, so nothing is
ever streamed that is not persisted. Events go out as the frames of
:mod:`app.ws.protocol`; errors become ``error`` frames; the document stays at
its last committed version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agents.api import (
    AgentConfig,
    ChatModel,
    MessageTooLongError,
    ModelRole,
    TokenCounter,
    TurnEngine,
    TurnInput,
    TurnRuntime,
    TurnTestRuns,
    check_message,
    local_token_counter,
)
from app.answers import answer_proposal
from app.auth import Principal
from app.bus.base import TurnLock
from app.errors import ConflictError, NotFoundError
from app.offload import off_loop
from app.publishing import Publisher, StoreCommitter
from app.runs import OpenDraft
from app.store import SessionRecord, Store, WorkflowRecord
from app.turn_lock import CANCELLED_BEFORE_START
from app.turn_records import AT_LAST_VERSION, Send, record_start
from app.turn_service import Once, StaleAnswer, TurnServiceBase
from app.warm import WarmDocuments
from app.ws.protocol import ServerFrame, error_frame
from prompts import PromptTemplate, load_prompt
from tools.base import ToolContext
from tools.document import WorkflowDocument

log = logging.getLogger(__name__)


class BusyError(ConflictError):
    code = "busy"


@dataclass
class TurnRequest:
    session: SessionRecord
    principal: Principal
    content: str
    page: str = "workflow"
    job_key: str | None = None
    errors: str | None = None
    review: bool | None = None
    """Review mode for this turn; ``None``: the session's setting (DESIGN §5c)."""


class TurnAids(Protocol):
    """What a turn gets from the test-run service: a runner for its ``test_run`` calls,
    and the session's last failed run in words (for "fix it")."""

    def for_turn(self, session: SessionRecord, principal: Principal) -> TurnTestRuns: ...

    async def last_failed_run(self, session: SessionRecord) -> str | None: ...


class TurnService(TurnServiceBase[TurnRuntime, WorkflowRecord]):
    """Workflow turns: started here, answered and resumed as :class:`TurnServiceBase`
    does, a review-mode proposal answered by :func:`app.answers.answer_proposal`."""

    def __init__(
        self,
        *,
        store: Store,
        publisher: Publisher,
        lock: TurnLock,
        engine: TurnEngine,
        models: Mapping[ModelRole, ChatModel],
        tools: ToolContext,
        config: AgentConfig,
        lock_ttl_s: float = 30.0,
        max_queue: int = 0,
        prompt_loader: Callable[[str, str | None], PromptTemplate] = load_prompt,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
        tokens: TokenCounter | None = None,
    ) -> None:
        self.store, self.publisher, self.lock, self.engine = store, publisher, lock, engine
        self.models, self.tools, self.config = models, tools, config
        self.lock_ttl_s = lock_ttl_s
        self.max_queue = max_queue
        """Turns that may wait in line for a busy workflow (``app.bus.queue``)."""
        self.tracer = engine.tracer
        self.prompt_loader = prompt_loader
        self.new_id = new_id
        self.tokens: TokenCounter = tokens or local_token_counter()
        """Counts tokens for the budgets (``agents.tokens``)."""
        self.aids: TurnAids | None = None
        """Set by the service once the test-run service exists (``app.services``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._warm = WarmDocuments()

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run a turn in the background; it outlives the socket that started it."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def turn_runtime(
        self, session: SessionRecord, principal: Principal, yaml: str, version: int
    ) -> TurnRuntime:
        workflow_id = workflow_of(session)
        committer = StoreCommitter(self.publisher, workflow_id, session.id, principal.author)
        runtime = TurnRuntime(
            models=self.models,
            clock=self.store.now,
            config=self.config,
            tools=await self._project_tools(session, workflow_id),
            committer=committer,
            prompt_loader=self.prompt_loader,
            tokens=self.tokens,
            test_runs=None if self.aids is None else self.aids.for_turn(session, principal),
        )
        # Reuse the document the last turn (or REST) left parsed (app.warm).
        warm = self._warm.take(workflow_id, yaml, version)
        if warm is not None:
            runtime.adopt(warm, version)
        else:  # parse it now, off the event loop, rather than in the graph's first node
            await off_loop(runtime.document, yaml, version)
        return runtime

    async def _project_tools(self, session: SessionRecord, workflow_id: str) -> ToolContext:
        """The tools with the project's credentials, so ``attach_credential`` checks a
        name against them (the catalogue and docs index stay the shared ones)."""
        project_id = session.project_id
        if project_id is None:
            record = await self.store.get_workflow(workflow_id)
            project_id = record.project_id if record is not None else None
        if project_id is None:
            return self.tools
        credentials = await self.store.get_credentials(project_id)
        return dataclasses.replace(self.tools, credentials=credentials.by_name())

    def keep_parsed(self, workflow_id: str, doc: WorkflowDocument, version: int) -> None:
        """Offer ``doc``, parsed at committed ``version``, to the next turn on the
        workflow (REST create, import, PUT and revert pass theirs along), so that turn
        neither parses nor emits it again. Hand over a document nothing else touches."""
        self._warm.keep(workflow_id, doc, version)

    def kept_parsed(self, workflow_id: str) -> tuple[WorkflowDocument, int] | None:
        """The document kept parsed for ``workflow_id`` and its committed version."""
        return self._warm.get(workflow_id)

    def forget_parsed(self, workflow_id: str) -> None:
        """Drop the document kept for ``workflow_id`` (it is about to be replaced).

        Freeing a parsed 200-step document takes ~3 ms of the event loop. Done here,
        before the commit that replaces it, rather than by :meth:`keep_parsed` just
        after, that time is not spent while the new version fans out to watchers."""
        self._warm.forget(workflow_id)

    def keep_warm(self, workflow_id: str, runtime: TurnRuntime) -> None:
        live = runtime.live_document()
        if live is not None:
            self.keep_parsed(workflow_id, *live)

    async def run(self, request: TurnRequest, send: Send) -> None:
        session = request.session
        workflow_id = workflow_of(session)
        try:  # before the lock and the store: a message over the limit is never recorded
            await check_message(request.content, self.config.max_message_tokens, self.tokens)
        except MessageTooLongError as exc:
            await send(error_frame(exc.code, exc.message))
            return

        try:
            pending = await self.open_proposal(session.id)
        except asyncio.CancelledError:  # cancelled before it took the lock: nothing ran
            await send(error_frame("cancelled", CANCELLED_BEFORE_START))
            raise
        if pending is not None:
            await send(
                error_frame(
                    "proposal_pending",
                    "A proposal is waiting for an answer: accept or reject it first.",
                )
            )
            return

        async def work() -> ServerFrame | None:
            turn = await self._begin(request)
            last, runtime = await self.start_run(
                turn,
                session,
                request.principal,
                send,
                lambda: self.turn_runtime(
                    session, request.principal, turn["yaml"], turn["version"]
                ),
            )
            live = runtime.live_document()
            if turn.get("review") and live is not None and live[1] != turn["version"]:
                # The parsed document is the draft, never a version: parse the head again
                # in the background, so accepting the proposal finds it parsed.
                self.spawn(
                    self._warm.parse_and_keep(
                        workflow_id, turn["yaml"], turn["version"], self.config.max_yaml_bytes
                    )
                )
            else:
                self.keep_warm(workflow_id, runtime)
            return last

        await self.under_lock(workflow_id, send, work, cancelled=AT_LAST_VERSION, queue=True)

    async def _begin(self, request: TurnRequest) -> TurnInput:
        """Record the turn and the user's message; the graph's input."""
        session = request.session
        workflow_id = workflow_of(session)
        workflow = await self.store.get_workflow(workflow_id)
        if workflow is None:
            raise NotFoundError("The workflow no longer exists.")
        turn_id = self.new_id()
        history = await record_start(
            self.store,
            self.engine,
            session,
            request.content,
            turn_id=turn_id,
            workflow_id=workflow_id,
            project_id=workflow.project_id,
            prompt_versions=dict(self.config.prompt_versions),
            # We hold the workflow's lock: a turn still marked running died with its worker.
            abandoned=await self.store.abandon_running_turns(workflow_id),
        )
        read_only = session.read_only or not request.principal.can_edit
        review = session.review if request.review is None else request.review
        return {
            "turn_id": turn_id,
            "workflow_id": workflow_id,
            "user_text": request.content,
            "page": "job" if request.page == "job" else "workflow",
            "job_key": request.job_key,
            "read_only": read_only,
            "errors": request.errors,
            "history": history,
            "yaml": workflow.yaml,
            "version": workflow.version,
            # A read-only turn changes nothing, so it has nothing to propose.
            "review": review and not read_only,
            "last_run": None if self.aids is None else await self.aids.last_failed_run(session),
        }

    async def open_proposal(self, session_id: str) -> tuple[str, dict[str, Any]] | None:
        """The session's paused turn and its proposal, when one waits for a review."""
        turn = await self.store.paused_turn(session_id)
        if turn is None or turn.workflow_id is None:
            return None
        pending = await self.engine.pending(turn.id)
        if pending is None or "proposal" not in pending:
            return None
        return turn.id, pending

    async def open_draft(self, session_id: str) -> OpenDraft | None:
        """The session's open proposal's draft, for a ``run`` frame to run
        (:meth:`app.runs.RunService.on_socket`)."""
        found = await self.open_proposal(session_id)
        if found is None:
            return None
        turn_id, pending = found
        proposal = pending["proposal"]
        return OpenDraft(turn_id, proposal["yaml"], int(proposal["base_version"]))

    async def review(
        self,
        session: SessionRecord,
        principal: Principal,
        request_id: str,
        accepted: list[str],
        send: Send,
    ) -> None:
        """Answer a proposal (DESIGN §5c); see :func:`app.answers.answer_proposal`."""
        await answer_proposal(self, session, principal, request_id, accepted, send)

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
        """Resume the session's turn paused on confirmation ``request_id`` with the answer
        (recorded before anything acts on it). A head that moved meanwhile closes it as
        ``stale_confirmation`` with nothing done; a proposal is answered by a review."""
        workflow_of(session)  # a project session has no workflow turn to answer
        await super().answer(session, principal, request_id, approved, send, feedback=feedback)

    async def where(self, session: SessionRecord) -> str:
        return workflow_of(session)

    def refuse_answer(self, pending: Mapping[str, Any]) -> ServerFrame | None:
        if "proposal" in pending:
            return error_frame(
                "proposal_pending",
                "This is a proposal: answer it with a review (the changes to accept).",
            )
        return None

    async def check_fresh(
        self, session: SessionRecord, where: str, turn_id: str, request_id: str, state: Once
    ) -> WorkflowRecord:
        paused_at = (await state()).get("version")
        workflow = await self.store.get_workflow(where)
        if workflow is None or workflow.version != paused_at:
            raise StaleAnswer(
                "The workflow changed while this was waiting; nothing was removed. Ask again."
            )
        return workflow

    async def resumed_runtime(
        self, session: SessionRecord, principal: Principal, where: str, fresh: WorkflowRecord
    ) -> TurnRuntime:
        return await self.turn_runtime(session, principal, fresh.yaml, fresh.version)

    def after_run(self, where: str, runtime: TurnRuntime) -> None:
        self.keep_warm(where, runtime)


def workflow_of(session: SessionRecord) -> str:
    """The workflow a workflow turn of ``session`` edits (a project session has none:
    its turns are plan turns, :mod:`app.plan_turns`)."""
    if session.workflow_id is None:
        raise ConflictError(
            "This is a project session: its turns plan the project.", code="project_session"
        )
    return session.workflow_id
