"""Chat sessions: open one on a workflow or a project, reload it (messages + document)
anywhere."""

from __future__ import annotations

from fastapi import APIRouter, status

from agents.api import ModelCallUsage, TurnUsage
from app.api import schemas
from app.auth import Principal
from app.deps import PrincipalDep, ServicesDep
from app.errors import ConflictError, ForbiddenError, NotFoundError
from app.services import Services
from app.store import SessionRecord
from app.text import PathId
from app.turns import workflow_of
from app.ws.protocol import ErrorFrame, MessageFrame, ServerFrame, WorkflowFrame
from tools.errors import PlanwrightError

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])


async def owned_session(services: Services, session_id: str, principal: Principal) -> SessionRecord:
    """The session, if it exists and this principal may use it (else 404, not 403:
    another user's session ids are not confirmed to exist)."""
    session = await services.store.get_session(session_id)
    if session is None or not principal.may_use_session(session.owner):
        raise NotFoundError(f"There is no session {session_id!r}.")
    return session


@router.post("", status_code=status.HTTP_201_CREATED)
async def create_session(
    body: schemas.CreateSession, services: ServicesDep, principal: PrincipalDep
) -> schemas.Session:
    """A session on a workflow, or on a project (``project_id``): with ``workflow_id``
    too, its turns edit that workflow of the project; without, it is a project session,
    whose turns plan the project (DESIGN §5a), an empty one too."""
    workflow_id = body.workflow_id
    if workflow_id is None:
        assert body.project_id is not None  # the body requires one of them
        await services.store.require_project(body.project_id)
    elif await services.store.get_workflow(workflow_id) is None:
        raise NotFoundError(f"There is no workflow {workflow_id!r}.")
    elif body.project_id is not None:
        await services.store.require_project(body.project_id)
    # Reviewers only ever get read-only sessions, whatever they ask for.
    read_only = body.read_only or not principal.can_edit
    session = await services.store.create_session(
        workflow_id=workflow_id,
        project_id=body.project_id,
        read_only=read_only,
        owner=principal.subject,
        # A read-only or project session has no workflow edits to propose.
        review=body.review and not read_only and workflow_id is not None,
    )
    return schemas.Session(
        id=session.id,
        workflow_id=session.workflow_id,
        project_id=session.project_id,
        read_only=read_only,
        review=session.review,
    )


async def _pending(services: Services, session_id: str) -> schemas.PendingConfirmation | None:
    """A confirmation (or plan review) this session's paused turn waits for, answerable
    from any device."""
    found = await services.plans.pending(session_id)
    if found is None:
        return None
    turn_id, pending = found
    plan = proposal = None
    if "plan" in pending:
        plan = schemas.PendingPlan.model_validate(
            {k: pending.get(k) for k in ("plan", "contracts", "delta", "revision")}
        )
    if "proposal" in pending:
        proposal = schemas.PendingProposal.model_validate(pending["proposal"])
    return schemas.PendingConfirmation(
        turn_id=turn_id,
        request_id=pending["request_id"],
        question=pending["question"],
        plan=plan,
        proposal=proposal,
    )


async def _turns(services: Services, session_id: str) -> list[schemas.Turn]:
    calls: dict[str, list[ModelCallUsage]] = {}
    for call in await services.store.list_session_model_calls(session_id):
        calls.setdefault(call.turn_id, []).append(call.usage())
    return [
        schemas.Turn(
            id=t.id,
            status=t.status,
            route=t.route,
            error_code=t.error_code,
            tool_rounds=t.tool_rounds,
            duration_ms=t.duration_ms,
            usage=TurnUsage(
                input_tokens=t.input_tokens,
                output_tokens=t.output_tokens,
                cache_creation_input_tokens=t.cache_creation_input_tokens,
                cache_read_input_tokens=t.cache_read_input_tokens,
                cost_usd=t.cost_usd,
                calls=calls.get(t.id, []),
            ),
            prompts=t.prompts,
            created_at=t.created_at,
        )
        for t in await services.store.list_turns(session_id)
    ]


@router.get("/{session_id}")
async def get_session(
    session_id: PathId, services: ServicesDep, principal: PrincipalDep
) -> schemas.SessionDetail:
    session = await owned_session(services, session_id, principal)
    workflow = None
    if session.workflow_id is not None:
        workflow = await services.store.get_workflow(session.workflow_id)
        if workflow is None:
            raise NotFoundError("The session's workflow no longer exists.")
    messages = await services.store.list_messages(session.id)
    return schemas.SessionDetail(
        turns=await _turns(services, session.id),
        pending_confirmation=await _pending(services, session.id),
        id=session.id,
        workflow_id=session.workflow_id,
        project_id=session.project_id,
        read_only=session.read_only,
        review=session.review,
        messages=[schemas.Message.model_validate(m, from_attributes=True) for m in messages],
        confirmations=[
            schemas.Confirmation.model_validate(c, from_attributes=True)
            for c in await services.store.list_confirmations(session.id)
        ],
        workflow=None
        if workflow is None
        else schemas.Workflow(
            id=workflow.id,
            project_id=workflow.project_id,
            name=workflow.name,
            version=workflow.version,
            yaml=workflow.yaml,
        ),
    )


@router.post("/{session_id}/review")
async def review_proposal(
    session_id: PathId, body: schemas.ReviewAnswer, services: ServicesDep, principal: PrincipalDep
) -> schemas.ReviewOutcome:
    """Answer the session's open proposal (DESIGN §5c), for clients without a socket: the
    accepted changes are applied on the head as one version, or nothing is. The same
    answer as the ``review`` frame, with the same refusals (``dependent_change``,
    ``stale_proposal``, ``no_pending_proposal``)."""
    session = await owned_session(services, session_id, principal)
    frames: list[ServerFrame] = []

    async def collect(frame: ServerFrame) -> None:
        frames.append(frame)

    await services.turns.review(session, principal, body.request_id, list(body.accepted), collect)
    failed = next((f for f in frames if isinstance(f, ErrorFrame)), None)
    if failed is not None:
        raise review_refusal(failed)
    committed = [f for f in frames if isinstance(f, WorkflowFrame)]
    said = next((f.text for f in frames if isinstance(f, MessageFrame)), "")
    workflow = await services.store.get_workflow(workflow_of(session))
    if workflow is None:
        raise NotFoundError("The session's workflow no longer exists.")
    return schemas.ReviewOutcome(
        outcome="applied" if committed else "rejected",
        version=workflow.version,
        message=said,
        workflow=None
        if not committed
        else schemas.Workflow(
            id=workflow.id,
            project_id=workflow.project_id,
            name=workflow.name,
            version=workflow.version,
            yaml=workflow.yaml,
        ),
    )


def review_refusal(frame: ErrorFrame) -> PlanwrightError:
    """A refused review answer as the error the HTTP edge maps (404 when nothing waits,
    403 for a read-only session, 409 otherwise)."""
    if frame.code == "no_pending_proposal":
        return NotFoundError(frame.message, code=frame.code)
    if frame.code == "read_only":
        return ForbiddenError(frame.message, code=frame.code)
    return ConflictError(frame.message, code=frame.code, changes=frame.changes)
