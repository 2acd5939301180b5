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
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agents.budget import MessageTooLongError, check_message
from agents.events import (
    ConfirmEvent,
    MessageEvent,
    PlanProposedEvent,
    ProposalEvent,
    RouteEvent,
    TurnCompletedEvent,
)
from agents.models.base import ChatModel, ModelRole
from agents.review import ReviewError, StaleProposalError, replay
from agents.runner import TurnRunner
from agents.runtime import AgentConfig, TurnRuntime, TurnTestRuns
from agents.state import TurnInput
from agents.tracing import Tracer
from agents.usage import UsageLedger
from app.auth import Principal
from app.bus.base import LockHandle, TurnLock
from app.errors import ConflictError, NotFoundError
from app.offload import off_loop
from app.publishing import Publisher, StoreCommitter
from app.store import SessionRecord, Store
from app.store.models import TurnStatus
from app.turn_records import finished_if_setup_fails, record_start
from app.ws.protocol import ServerFrame, TurnStartedFrame, error_frame, event_frame
from prompts import PromptTemplate, load_prompt
from tools.base import ToolContext
from tools.document import WorkflowDocument
from tools.errors import PlanwrightError

log = logging.getLogger(__name__)
Send = Callable[[ServerFrame], Awaitable[None]]


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


class TurnService:
    def __init__(
        self,
        *,
        store: Store,
        publisher: Publisher,
        lock: TurnLock,
        runner: TurnRunner,
        models: Mapping[ModelRole, ChatModel],
        tools: ToolContext,
        config: AgentConfig,
        lock_ttl_s: float = 30.0,
        tracer: Tracer | None = None,
        prompt_loader: Callable[[str, str | None], PromptTemplate] = load_prompt,
        new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    ) -> None:
        self.store, self.publisher, self.lock, self.runner = store, publisher, lock, runner
        self.models, self.tools, self.config = models, tools, config
        self.lock_ttl_s = lock_ttl_s
        self.tracer = tracer or Tracer(None)
        self.prompt_loader = prompt_loader
        self.new_id = new_id
        self.aids: TurnAids | None = None
        """Set by the service once the test-run service exists (``app.services``)."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._warm: OrderedDict[str, tuple[WorkflowDocument, int]] = OrderedDict()

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

    async def _runtime(
        self, session: SessionRecord, principal: Principal, yaml: str, version: int
    ) -> TurnRuntime:
        workflow_id = workflow_of(session)
        committer = StoreCommitter(self.publisher, workflow_id, session.id, principal.author)
        runtime = TurnRuntime(
            models=self.models,
            config=self.config,
            tools=self.tools,
            committer=committer,
            prompt_loader=self.prompt_loader,
            test_runs=None if self.aids is None else self.aids.for_turn(session, principal),
        )
        warm = self._warm.pop(workflow_id, None)
        # Reuse the document the last turn (or REST) left parsed (a 200-step workflow
        # takes ~150 ms to parse), but only if it is exactly the committed text (its
        # emitted text is cached: comparing costs no emission).
        if warm is not None and warm[1] == version and warm[0].to_yaml() == yaml:
            runtime.adopt(warm[0], version)
        else:  # parse it now, off the event loop, rather than in the graph's first node
            await off_loop(runtime.document, yaml, version)
        return runtime

    def keep_parsed(self, workflow_id: str, doc: WorkflowDocument, version: int) -> None:
        """Offer ``doc``, parsed at committed ``version``, to the next turn on the
        workflow (REST create, import, PUT and revert pass theirs along), so that turn
        neither parses nor emits it again. Hand over a document nothing else touches."""
        self._warm[workflow_id] = (doc, version)
        self._warm.move_to_end(workflow_id)
        while len(self._warm) > WARM_DOCUMENTS:
            self._warm.popitem(last=False)

    def forget_parsed(self, workflow_id: str) -> None:
        """Drop the document kept for ``workflow_id`` (it is about to be replaced).

        Freeing a parsed 200-step document takes ~3 ms of the event loop. Done here,
        before the commit that replaces it, rather than by :meth:`keep_parsed` just
        after, that time is not spent while the new version fans out to watchers."""
        self._warm.pop(workflow_id, None)

    def _keep_warm(self, workflow_id: str, runtime: TurnRuntime) -> None:
        live = runtime.live_document()
        if live is not None:
            self.keep_parsed(workflow_id, *live)

    async def take_lock(self, key: str, send: Send, *, what: str = "workflow") -> LockHandle | None:
        """The turn lock of ``key`` (a workflow id, or a project's plan-turn key), or
        ``None`` after telling the client why not."""
        try:
            handle = await self.lock.acquire(key, ttl_s=self.lock_ttl_s)
        except Exception:  # e.g. Redis unreachable: say so rather than go silent
            log.exception("could not take the turn lock of %s", key)
            await send(error_frame("unavailable", "Could not start the turn; try again shortly."))
            return None
        if handle is None:
            await send(error_frame("busy", f"Another turn is running on this {what}; try again."))
        return handle

    async def under_lock(
        self,
        key: str,
        send: Send,
        work: Callable[[], Awaitable[ServerFrame | None]],
        *,
        what: str = "workflow",
        subject: str = "turn",
        doing: str = "start",
        turn_id: str | None = None,
        cancelled: str = "",
    ) -> None:
        """Run ``work`` holding ``key``'s turn lock; the frame it returns (or the error
        frame for how it failed) is sent once the lock is released, so a client that
        starts its next turn on that frame never finds its own lock still held."""
        handle = await self.take_lock(key, send, what=what)
        if handle is None:
            return
        last: ServerFrame | None = None
        try:
            last = await work()
        except asyncio.CancelledError:
            last = error_frame("cancelled", f"The {subject} was cancelled.{cancelled}", turn_id)
            raise
        except PlanwrightError as exc:
            last = error_frame(exc.code, exc.message, turn_id)
        except Exception:
            log.exception("%s could not %s (%s)", subject, doing, key)
            last = error_frame("internal_error", f"The {subject} could not {doing}.", turn_id)
        finally:
            await handle.release()
            if last is not None:
                await send(last)

    async def run(self, request: TurnRequest, send: Send) -> None:
        session = request.session
        workflow_id = workflow_of(session)
        try:  # before the lock and the store: a message over the limit is never recorded
            check_message(request.content, self.config.max_message_chars)
        except MessageTooLongError as exc:
            await send(error_frame(exc.code, exc.message))
            return

        if await self.open_proposal(session.id) is not None:
            await send(
                error_frame(
                    "proposal_pending",
                    "A proposal is waiting for an answer: accept or reject it first.",
                )
            )
            return

        async def work() -> ServerFrame | None:
            turn = await self._begin(request)
            async with finished_if_setup_fails(self.store, turn["turn_id"]):
                await send(TurnStartedFrame(turn_id=turn["turn_id"]))
                trace = self.tracer.turn(
                    turn, session_id=session.id, user_id=request.principal.subject
                )
                runtime = trace.runtime(
                    await self._runtime(session, request.principal, turn["yaml"], turn["version"])
                )
            events = trace.wrap(self.runner.start(turn, runtime))
            last = await self.relay(events, turn["turn_id"], session, send, runtime.usage)
            live = runtime.live_document()
            if turn.get("review") and live is not None and live[1] != turn["version"]:
                # The parsed document is the draft, never a version: parse the head again
                # in the background, so accepting the proposal finds it parsed.
                self.spawn(self._warm_head(workflow_id, turn["yaml"], turn["version"]))
            else:
                self._keep_warm(workflow_id, runtime)
            return last

        await self.under_lock(workflow_id, send, work, cancelled=_AT_LAST_VERSION)

    async def _warm_head(self, workflow_id: str, yaml: str, version: int) -> None:
        try:
            doc = await off_loop(_parsed, yaml, self.config.max_yaml_bytes)
        except Exception:  # only a cache: the next turn parses it itself
            log.warning("could not keep workflow %s parsed", workflow_id, exc_info=True)
            return
        if workflow_id not in self._warm:  # nothing newer was kept meanwhile
            self.keep_parsed(workflow_id, doc, version)

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
            self.runner,
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
        pending = await self.runner.pending_confirmation(turn.id)
        if pending is None or "proposal" not in pending:
            return None
        return turn.id, pending

    async def review(
        self,
        session: SessionRecord,
        principal: Principal,
        request_id: str,
        accepted: list[str],
        send: Send,
    ) -> None:
        """Answer a proposal (DESIGN §5c): apply the ``accepted`` changes on the head as one
        version, or none. A dependent answer is refused and the proposal stays open; a
        stale one closes it. Nothing is committed unless every accepted change applies."""
        workflow_id = workflow_of(session)
        found = await self.open_proposal(session.id)
        if found is None or found[1]["request_id"] != request_id:
            await send(
                error_frame("no_pending_proposal", f"No proposal is waiting for {request_id!r}.")
            )
            return
        if session.read_only or not principal.can_edit:
            await send(error_frame("read_only", "This session cannot apply changes."))
            return
        paused_id = found[0]

        async def work() -> ServerFrame | None:
            state = await self.runner.state(paused_id)
            workflow = await self.store.get_workflow(workflow_id)
            if workflow is None:
                raise NotFoundError("The workflow no longer exists.")
            # The head as the next turn would get it: parsed already when it is warm.
            runtime = await self._runtime(session, principal, workflow.yaml, workflow.version)
            live = runtime.live_document()
            assert live is not None  # _runtime always leaves the head parsed
            try:  # before the answer is recorded: a refused answer can be given again
                done = await off_loop(
                    replay,
                    base_yaml=state["base_yaml"],
                    head=live[0],
                    moved=workflow.version != state["base_version"],
                    draft=state.get("draft") or [],
                    accepted=accepted,
                    ctx=self.tools,
                    max_bytes=self.config.max_yaml_bytes,
                )
            except ReviewError as exc:
                runtime.forget_document()  # the replay may have changed the parsed head
                if isinstance(exc, StaleProposalError):  # the proposal is closed
                    await self.store.answer_confirmation(
                        paused_id,
                        request_id,
                        approved=False,
                        answered_by=principal.author,
                        feedback=_accepted_note(accepted),
                    )
                    await self.store.finish_turn(paused_id, status="failed", error_code=exc.code)
                    await self.runner.forget(paused_id)
                changes = exc.details.get("changes")
                return error_frame(exc.code, exc.message, paused_id, changes=changes)
            await self.store.answer_confirmation(
                paused_id,
                request_id,
                approved=bool(accepted),
                answered_by=principal.author,
                feedback=_accepted_note(accepted),
            )
            await self.store.update_turn_status(paused_id, "running")
            async with finished_if_setup_fails(self.store, paused_id):
                trace = self.tracer.turn(
                    state, session_id=session.id, user_id=principal.subject, tags=["reviewed"]
                )
                runtime = trace.runtime(runtime)
                earlier = await self.store.list_model_calls(paused_id)
                runtime.usage = UsageLedger.resumed(c.usage() for c in earlier)
                # Emitted incrementally by the replay's edits: no emission of the whole.
                yaml = await off_loop(done.doc.to_yaml) if done.applied else workflow.yaml
            answer = {
                "accepted": accepted,
                "applied": done.applied,
                "yaml": yaml,
                "name": done.doc.name,
                "changes": [c.as_dict() for c in done.changes],
                "head_version": workflow.version,
            }
            events = trace.wrap(
                self.runner.resume(paused_id, bool(accepted), runtime, answer=answer)
            )
            last = await self.relay(events, paused_id, session, send, runtime.usage)
            self._keep_warm(workflow_id, runtime)
            return last

        await self.under_lock(
            workflow_id, send, work, doing="apply", turn_id=paused_id, cancelled=_AT_LAST_VERSION
        )

    async def resume(
        self,
        session: SessionRecord,
        principal: Principal,
        request_id: str,
        approved: bool,
        send: Send,
        *,
        feedback: str | None = None,
    ) -> None:
        workflow_id = workflow_of(session)
        turn = await self.store.paused_turn(session.id)
        pending = await self.runner.pending_confirmation(turn.id) if turn else None
        if turn is None or pending is None or pending["request_id"] != request_id:
            await send(
                error_frame("no_pending_confirmation", f"Nothing is waiting for {request_id!r}.")
            )
            return
        if "proposal" in pending:
            await send(
                error_frame(
                    "proposal_pending",
                    "This is a proposal: answer it with a review (the changes to accept).",
                )
            )
            return
        paused_id = turn.id

        async def work() -> ServerFrame | None:
            # The answer is on record before anything acts on it.
            await self.store.answer_confirmation(
                paused_id,
                request_id,
                approved=approved,
                answered_by=principal.author,
                feedback=feedback,
            )
            state = await self.runner.state(paused_id)
            workflow = await self.store.get_workflow(workflow_id)
            if workflow is None or workflow.version != state.get("version"):
                await self.store.finish_turn(paused_id, status="failed", error_code="stale")
                await self.runner.forget(paused_id)
                return error_frame(
                    "stale_confirmation",
                    "The workflow changed while this was waiting; nothing was removed. Ask again.",
                    paused_id,
                )
            await self.store.update_turn_status(paused_id, "running")
            async with finished_if_setup_fails(self.store, paused_id):
                trace = self.tracer.turn(
                    state, session_id=session.id, user_id=principal.subject, tags=["resumed"]
                )
                runtime = trace.runtime(
                    await self._runtime(session, principal, workflow.yaml, workflow.version)
                )
                # The turn's totals (turn.completed, the row) include the calls before the pause.
                earlier = await self.store.list_model_calls(paused_id)
                runtime.usage = UsageLedger.resumed(c.usage() for c in earlier)
            events = trace.wrap(self.runner.resume(paused_id, approved, runtime, feedback=feedback))
            last = await self.relay(events, paused_id, session, send, runtime.usage)
            self._keep_warm(workflow_id, runtime)
            return last

        await self.under_lock(
            workflow_id, send, work, doing="resume", turn_id=paused_id, cancelled=_AT_LAST_VERSION
        )

    async def relay(
        self, events: Any, turn_id: str, session: SessionRecord, send: Send, usage: UsageLedger
    ) -> ServerFrame | None:
        """Relay a turn's events, recording what they mean in the store.

        The turn's last frame (``turn.completed``, ``confirm.required`` or an
        ``error``) is returned instead of sent: the caller sends it once the
        workflow's lock is released. However the run ends (paused, completed,
        failed, cancelled) the model calls it made, the prompts it used and its
        route are stored with the turn.
        """
        stored_message = False
        route: str | None = None
        last: ServerFrame | None = None

        async def finish(status: TurnStatus, **outcome: Any) -> None:
            calls = usage.unsaved()
            await self.store.finish_turn(
                turn_id, status=status, route=route, calls=calls, prompts=usage.prompts, **outcome
            )
            usage.mark_saved(len(calls))  # only once stored: a failed write is retried below

        try:
            async for event in events:
                frame = event_frame(event, turn_id=turn_id, workflow_id=session.workflow_id)
                if isinstance(event, RouteEvent):
                    route = event.destination
                elif isinstance(event, MessageEvent):
                    # Stored before it is sent: a reload shows what the socket showed.
                    await self.store.add_message(session.id, "assistant", event.text, turn_id)
                    stored_message = True
                elif isinstance(event, (ConfirmEvent, PlanProposedEvent, ProposalEvent)):
                    await self.store.record_confirmation(
                        turn_id,
                        session_id=session.id,
                        request_id=event.request_id,
                        question=event.question,
                    )
                    await finish("paused")
                    last = frame
                    continue
                elif isinstance(event, TurnCompletedEvent):
                    if not stored_message:  # a turn that ended without a final message
                        await self.store.add_message(session.id, "assistant", "", turn_id)
                    await finish(
                        "completed", tool_rounds=event.tool_rounds, duration_ms=event.duration_ms
                    )
                    last = frame
                    continue
                await send(frame)
        except asyncio.CancelledError:
            await finish("cancelled", error_code="cancelled")
            raise
        except PlanwrightError as exc:
            await finish("failed", error_code=exc.code)
            return error_frame(exc.code, _sentence(exc.message) + _AT_LAST_VERSION, turn_id)
        except Exception:
            log.exception("turn %s failed", turn_id)
            await finish("failed", error_code="internal_error")
            return error_frame(
                "internal_error", "The turn failed unexpectedly." + _AT_LAST_VERSION, turn_id
            )
        return last


def _parsed(yaml: str, max_bytes: int) -> WorkflowDocument:
    """``yaml`` parsed, its text emitted once (cached) so comparing it later is free."""
    doc = WorkflowDocument.from_yaml(yaml, max_bytes=max_bytes)
    doc.to_yaml()
    return doc


def _accepted_note(accepted: list[str]) -> str:
    """How a review answer is kept with the turn's confirmations."""
    return "accepted: " + (", ".join(accepted) if accepted else "none")


def workflow_of(session: SessionRecord) -> str:
    """The workflow a workflow turn of ``session`` edits (a project session has none:
    its turns are plan turns, :mod:`app.plan_turns`)."""
    if session.workflow_id is None:
        raise ConflictError(
            "This is a project session: its turns plan the project.", code="project_session"
        )
    return session.workflow_id


_AT_LAST_VERSION = " The workflow is at its last saved version."
WARM_DOCUMENTS = 64  # parsed documents kept between turns, most recently used


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."
