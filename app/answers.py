"""Answering a paused turn: a confirmation (go ahead or not), or a review-mode proposal
(DESIGN §5c: the accepted changes replayed on the head as one version, or none).

A proposal's replay runs before the answer is recorded, so a refused answer (a change that
needs one left out) can be given again; a stale one (the head moved and a change no
longer applies there) closes the proposal. Nothing is committed unless every accepted
change applies: the graph's review node commits what the replay made, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.review import ReviewError, StaleProposalError, replay
from agents.usage import UsageLedger
from app.auth import Principal
from app.errors import NotFoundError
from app.offload import off_loop
from app.store import SessionRecord
from app.turn_records import AT_LAST_VERSION, Send, finished_if_setup_fails
from app.ws.protocol import ServerFrame, error_frame

if TYPE_CHECKING:  # the service calls in here; only its type is needed
    from app.turns import TurnService


async def answer_proposal(
    turns: TurnService,
    session: SessionRecord,
    principal: Principal,
    request_id: str,
    accepted: list[str],
    send: Send,
) -> None:
    """Apply the ``accepted`` changes of the session's open proposal ``request_id`` on the
    head as one version (``[]``: reject). A dependent answer is refused and the proposal
    stays open; a stale one closes it."""
    from app.turns import workflow_of

    workflow_id = workflow_of(session)
    found = await turns.open_proposal(session.id)
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
        state = await turns.runner.state(paused_id)
        workflow = await turns.store.get_workflow(workflow_id)
        if workflow is None:
            raise NotFoundError("The workflow no longer exists.")
        # The head as the next turn would get it: parsed already when it is warm.
        runtime = await turns.turn_runtime(session, principal, workflow.yaml, workflow.version)
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
                ctx=turns.tools,
                max_bytes=turns.config.max_yaml_bytes,
            )
        except ReviewError as exc:
            runtime.forget_document()  # the replay may have changed the parsed head
            if isinstance(exc, StaleProposalError):  # the proposal is closed
                await turns.store.answer_confirmation(
                    paused_id,
                    request_id,
                    approved=False,
                    answered_by=principal.author,
                    feedback=_accepted_note(accepted),
                )
                await turns.store.finish_turn(paused_id, status="failed", error_code=exc.code)
                await turns.runner.forget(paused_id)
            changes = exc.details.get("changes")
            return error_frame(exc.code, exc.message, paused_id, changes=changes)
        await turns.store.answer_confirmation(
            paused_id,
            request_id,
            approved=bool(accepted),
            answered_by=principal.author,
            feedback=_accepted_note(accepted),
        )
        await turns.store.update_turn_status(paused_id, "running")
        async with finished_if_setup_fails(turns.store, paused_id):
            trace = turns.tracer.turn(
                state, session_id=session.id, user_id=principal.subject, tags=["reviewed"]
            )
            runtime = trace.runtime(runtime)
            earlier = await turns.store.list_model_calls(paused_id)
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
        events = trace.wrap(turns.runner.resume(paused_id, bool(accepted), runtime, answer=answer))
        last = await turns.relay(events, paused_id, session, send, runtime.usage)
        turns.keep_warm(workflow_id, runtime)
        return last

    await turns.under_lock(
        workflow_id, send, work, doing="apply", turn_id=paused_id, cancelled=AT_LAST_VERSION
    )


async def answer_confirmation(
    turns: TurnService,
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
    from app.turns import workflow_of

    workflow_id = workflow_of(session)
    turn = await turns.store.paused_turn(session.id)
    pending = await turns.runner.pending_confirmation(turn.id) if turn else None
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
        await turns.store.answer_confirmation(
            paused_id,
            request_id,
            approved=approved,
            answered_by=principal.author,
            feedback=feedback,
        )
        state = await turns.runner.state(paused_id)
        workflow = await turns.store.get_workflow(workflow_id)
        if workflow is None or workflow.version != state.get("version"):
            await turns.store.finish_turn(paused_id, status="failed", error_code="stale")
            await turns.runner.forget(paused_id)
            return error_frame(
                "stale_confirmation",
                "The workflow changed while this was waiting; nothing was removed. Ask again.",
                paused_id,
            )
        await turns.store.update_turn_status(paused_id, "running")
        async with finished_if_setup_fails(turns.store, paused_id):
            trace = turns.tracer.turn(
                state, session_id=session.id, user_id=principal.subject, tags=["resumed"]
            )
            runtime = trace.runtime(
                await turns.turn_runtime(session, principal, workflow.yaml, workflow.version)
            )
            # The turn's totals (turn.completed, the row) include the calls before the pause.
            earlier = await turns.store.list_model_calls(paused_id)
            runtime.usage = UsageLedger.resumed(c.usage() for c in earlier)
        events = trace.wrap(turns.runner.resume(paused_id, approved, runtime, feedback=feedback))
        last = await turns.relay(events, paused_id, session, send, runtime.usage)
        turns.keep_warm(workflow_id, runtime)
        return last

    await turns.under_lock(
        workflow_id, send, work, doing="resume", turn_id=paused_id, cancelled=AT_LAST_VERSION
    )


def _accepted_note(accepted: list[str]) -> str:
    """How a review answer is kept with the turn's confirmations."""
    return "accepted: " + (", ".join(accepted) if accepted else "none")
