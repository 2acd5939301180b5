"""WebSocket chat: ``/v1/sessions/{id}/ws``.

Frames in: ``turn``, ``confirm``, ``review`` (a proposal's answer), ``run``, ``cancel``.
Frames out: the turn's events plus ``workflow`` frames for changes made elsewhere
(other sessions, REST), each version once. Bad frames get an ``error`` frame; the connection stays.

The socket follows its workflow on the bus before it accepts the handshake: a change
committed once the client's connect has returned always reaches it (subscribing after
the handshake left a window where a client's own REST change right after connecting
never came back on its chat socket).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from app.auth import Principal
from app.bus.base import Subscription
from app.deps import ServicesDep
from app.errors import AuthError
from app.services import Services
from app.store import SessionRecord
from app.text import PathId
from app.turns import TurnRequest
from app.unavailable import unavailable
from app.ws.connection import INVALID_REQUEST, NOT_ALLOWED, NOT_FOUND, TRY_AGAIN_LATER, Connection
from app.ws.protocol import (
    CancelFrame,
    ConfirmFrame,
    ErrorFrame,
    FrameError,
    ReviewFrame,
    RunFrame,
    TurnFrame,
    error_frame,
    parse_frame,
)
from app.ws.relay import relay_to_chat
from tools.errors import PlanwrightError

router = APIRouter()
log = logging.getLogger(__name__)

BUS_PAUSED = (
    "Live updates from other sessions are paused until the event bus is back; "
    "your turns still run, and what you missed follows when it is."
)

MAX_REASON_BYTES = 123
"""The most a WebSocket close frame's reason may hold (RFC 6455, 5.5.1)."""


async def authenticate(
    websocket: WebSocket, services: ServicesDep, token: str | None
) -> Principal | None:
    try:
        return services.auth.authenticate(token)
    except AuthError as exc:
        await websocket.close(code=NOT_ALLOWED, reason=exc.message)
        return None


async def refuse_invalid_socket(websocket: WebSocket, error: PlanwrightError) -> None:
    """A socket whose query or path parameters fail validation (``since_version=abc``):
    accepted, then sent an ``error`` frame and closed with 4400 and a reason, so the
    client is told what is wrong instead of seeing a handshake refused as if its token
    were. The token is checked first: without a valid one it learns nothing more."""
    await websocket.accept()
    services = websocket.app.state.services
    if await authenticate(websocket, services, websocket.query_params.get("token")) is None:
        return
    await websocket.send_json({**error_frame(error.code, error.message).wire(), "seq": 1})
    reason = error.message.encode()[:MAX_REASON_BYTES].decode(errors="ignore")
    await websocket.close(code=INVALID_REQUEST, reason=reason)


async def cancel(task: asyncio.Task[None], connection: Connection) -> None:
    """Cancel a turn and wait for it to wind down. A turn cancelled before it got to
    run says nothing itself, so say it here."""
    coroutine = task.get_coro()
    started = not (
        inspect.iscoroutine(coroutine)
        and inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED
    )
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    if not started:
        await connection.send(
            error_frame("cancelled", "The turn was cancelled before it started; nothing changed.")
        )


async def answered(work: Coroutine[Any, Any, None], conn: Connection) -> None:
    """Run what a frame asked for; whatever escapes it (the database or Redis out of
    reach before a turn could start, say) still gets the client an ``error`` frame, so
    nothing sent goes unanswered."""
    try:
        await work
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        down = unavailable(exc)
        if down is None:
            log.exception("a chat frame's work failed")
            await conn.send(error_frame("internal_error", "That could not be done; try again."))
        else:
            log.warning("a chat frame's work found a service down: %s", exc)
            await conn.send(error_frame(down.code, down.message))


@dataclass(frozen=True)
class _Refusal:
    """Why a chat socket is turned away, told once it is accepted: an ``error`` frame
    (none for a bad token) and the close code and reason."""

    code: int
    reason: str
    frame: ErrorFrame | None = None


async def _admit(
    services: Services, session_id: str, token: str | None
) -> tuple[Principal, SessionRecord] | _Refusal:
    """The caller and the session, or why the socket is refused (before the handshake)."""
    try:
        principal = services.auth.authenticate(token)
    except AuthError as exc:
        return _Refusal(NOT_ALLOWED, exc.message)
    try:
        session = await services.store.get_session(session_id)
    except Exception as exc:  # the database is out of reach: say so, then "try again later"
        down = unavailable(exc)
        if down is None:
            raise
        return _Refusal(
            TRY_AGAIN_LATER, "the database is unavailable", error_frame(down.code, down.message)
        )
    if session is None or not principal.may_use_session(session.owner):
        return _Refusal(NOT_FOUND, "no such session", error_frame("not_found", "No such session."))
    return principal, session


async def _refuse(websocket: WebSocket, refusal: _Refusal) -> None:
    await websocket.accept()
    if refusal.frame is not None:
        await websocket.send_json({**refusal.frame.wire(), "seq": 1})
    await websocket.close(code=refusal.code, reason=refusal.reason)


async def _follow(services: Services, workflow_id: str | None) -> tuple[Subscription | None, bool]:
    """The workflow's bus subscription (``None`` for a project session, whose turns'
    frames are all it gets), and whether the bus refused it (turns still run then; the
    relay subscribes again)."""
    if workflow_id is None:
        return None, False
    try:
        return await services.bus.subscribe(workflow_id), False
    except Exception:
        log.warning("chat on %s starts without the bus", workflow_id)
        return None, True


@router.websocket("/v1/sessions/{session_id}/ws")
async def chat_socket(
    websocket: WebSocket, session_id: PathId, services: ServicesDep, token: str | None = None
) -> None:
    try:
        admitted = await _admit(services, session_id, token)
    except Exception:  # an unexpected failure: accepted first, as it always was
        await websocket.accept()
        raise
    if isinstance(admitted, _Refusal):
        await _refuse(websocket, admitted)
        return
    principal, session = admitted
    # Subscribed before the handshake completes (see the module's docstring).
    subscription, bus_down = await _follow(services, session.workflow_id)
    try:
        await websocket.accept()
        await _converse(websocket, services, principal, session, subscription, bus_down)
    finally:
        if subscription is not None:
            await subscription.close()  # closing twice is harmless


async def _converse(
    websocket: WebSocket,
    services: Services,
    principal: Principal,
    session: SessionRecord,
    subscription: Subscription | None,
    bus_down: bool,
) -> None:
    """The accepted socket: relay the workflow's changes, answer the client's frames."""
    limit = services.settings.max_frame_bytes
    running: asyncio.Task[None] | None = None
    async with Connection(websocket, queue_size=services.settings.send_queue_size) as conn:
        forwarder: asyncio.Task[None] | None = None
        if bus_down:
            await conn.reply(error_frame("bus_unavailable", BUS_PAUSED))
        if session.workflow_id is not None:  # a project session gets its turns' frames only
            forwarder = asyncio.create_task(
                relay_to_chat(services.bus, services.store, session.workflow_id, subscription, conn)
            )
        try:
            while not conn.closed:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    raw = message.get("bytes") or b""
                    text = raw.decode("utf-8", errors="replace")
                if len(text.encode("utf-8")) > limit:
                    await conn.reply(
                        error_frame("frame_too_large", f"Frames are limited to {limit} bytes.")
                    )
                    continue
                try:
                    frame = parse_frame(text)
                except FrameError as exc:
                    await conn.reply(error_frame(exc.code, exc.message))
                    continue
                if isinstance(frame, CancelFrame):
                    if running is None or running.done():
                        await conn.reply(error_frame("no_turn", "No turn is running."))
                    else:
                        await cancel(running, conn)
                    continue
                if running is not None and not running.done():
                    await conn.reply(error_frame("busy", "A turn is already running here."))
                    continue
                if isinstance(frame, TurnFrame):
                    request = TurnRequest(
                        session=session,
                        principal=principal,
                        content=frame.content,
                        page=frame.context.page,
                        job_key=frame.context.job_key,
                        errors=frame.errors,
                        review=frame.review,
                    )
                    if session.workflow_id is None or frame.mode == "plan":
                        work = services.plans.run(request, conn.send, mode=frame.mode)
                    else:
                        work = services.turns.run(request, conn.send)
                    running = services.turns.spawn(answered(work, conn))
                elif isinstance(frame, ReviewFrame):
                    running = services.turns.spawn(
                        answered(
                            services.turns.review(
                                session, principal, frame.request_id, frame.accepted, conn.send
                            ),
                            conn,
                        )
                    )
                elif isinstance(frame, RunFrame):  # held as ``running``: a turn meanwhile is busy
                    running = services.turns.spawn(
                        answered(
                            services.runs.on_socket(session, principal, frame, conn.send), conn
                        )
                    )
                elif isinstance(frame, ConfirmFrame):
                    running = services.turns.spawn(
                        answered(
                            services.plans.answer(
                                session,
                                principal,
                                frame.request_id,
                                frame.approved,
                                conn.send,
                                feedback=frame.feedback,
                            ),
                            conn,
                        )
                    )
        except WebSocketDisconnect:
            pass
        finally:
            if forwarder is not None:
                forwarder.cancel()
