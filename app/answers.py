"""Answering a review-mode proposal (DESIGN §5c: the accepted changes replayed on the head
as one version, or none); a confirmation (go ahead or not) is answered as every paused
turn is (:meth:`app.turn_service.TurnServiceBase.answer`).

A proposal's replay runs before the answer is recorded, so a refused answer (a change that
needs one left out) can be given again; a stale one (the head moved and a change no
longer applies there) closes the proposal. Nothing is committed unless every accepted
change applies: the graph's review node commits what the replay made, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.api import ReviewError, StaleProposalError, TurnRuntime, replay
from app.auth import Principal
from app.errors import NotFoundError
from app.offload import off_loop
from app.store import SessionRecord
from app.turn_records import AT_LAST_VERSION, Send
from app.turn_service import Once
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
        state = await turns.engine.state(paused_id)
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
                await turns.engine.forget(paused_id)
            changes = exc.details.get("changes")
            return error_frame(exc.code, exc.message, paused_id, changes=changes)
        await turns.store.answer_confirmation(
            paused_id,
            request_id,
            approved=bool(accepted),
            answered_by=principal.author,
            feedback=_accepted_note(accepted),
        )

        async def answer() -> dict[str, Any]:
            # Emitted incrementally by the replay's edits: no emission of the whole.
            yaml = await off_loop(done.doc.to_yaml) if done.applied else workflow.yaml
            return {
                "accepted": accepted,
                "applied": done.applied,
                "yaml": yaml,
                "name": done.doc.name,
                "changes": [c.as_dict() for c in done.changes],
                "head_version": workflow.version,
            }

        async def head() -> TurnRuntime:
            return runtime

        last, resumed = await turns.resume_run(
            paused_id,
            session,
            principal,
            send,
            head,
            approved=bool(accepted),
            state=Once.of(state),
            tags=["reviewed"],
            answer=answer,
        )
        turns.keep_warm(workflow_id, resumed)
        return last

    await turns.under_lock(
        workflow_id, send, work, doing="apply", turn_id=paused_id, cancelled=AT_LAST_VERSION
    )


def _accepted_note(accepted: list[str]) -> str:
    """How a review answer is kept with the turn's confirmations."""
    return "accepted: " + (", ".join(accepted) if accepted else "none")
