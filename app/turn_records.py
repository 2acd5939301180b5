"""Recording a turn: its start and its events (messages, confirmations, how it ended),
what workflow turns (:mod:`app.turns`) and plan turns (:mod:`app.plan_turns`) store the
same way, under their own locks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from agents.api import (
    ConfirmEvent,
    MessageEvent,
    PlanProposedEvent,
    ProposalEvent,
    RouteEvent,
    TurnCompletedEvent,
    TurnEngine,
    UsageLedger,
)
from app.store import SessionRecord, Store
from app.store.models import TurnStatus
from app.unavailable import unavailable
from app.ws.protocol import ServerFrame, error_frame, event_frame
from tools.errors import PlanwrightError

log = logging.getLogger(__name__)
Send = Callable[[ServerFrame], Awaitable[None]]
"""Where a turn's frames go (a socket's queue, a test's list)."""


async def record_start(
    store: Store,
    engine: TurnEngine,
    session: SessionRecord,
    content: str,
    *,
    turn_id: str,
    workflow_id: str | None,
    project_id: str,
    prompt_versions: dict[str, str],
    abandoned: Sequence[str],
) -> list[dict[str, str]]:
    """Record turn ``turn_id`` and the user's message; returns the session's history
    before it.

    The caller holds the turn's lock and has just marked the turns a dead worker
    left ``running`` as abandoned (``abandoned``, their ids): their checkpoints go
    now, since nothing can resume them (best effort: a saver that fails leaves rows
    behind, never the turn unstarted). A question the session left unanswered is
    superseded by the new message; a plan review's proposal is withdrawn from the
    project (``project_id``) with it. ``engine`` may be either graph's: both keep
    their checkpoints in one saver. If the message cannot be stored, the turn is
    marked failed (``setup_failed``) rather than left running.
    """
    history = [
        {"role": m.role, "content": m.content} for m in await store.list_messages(session.id)
    ]
    for dead in abandoned:
        try:
            await engine.forget(dead)
        except Exception:
            log.exception("could not delete the checkpoints of abandoned turn %s", dead)
    paused = await store.paused_turn(session.id)
    if paused is not None:
        await store.finish_turn(paused.id, status="cancelled", error_code="superseded")
        if paused.workflow_id is None:  # a plan review
            await store.withdraw_proposal(project_id, paused.id)
        await engine.forget(paused.id)
    await store.start_turn(
        turn_id, session_id=session.id, workflow_id=workflow_id, prompt_versions=prompt_versions
    )
    try:
        await store.add_message(session.id, "user", content, turn_id)
    except BaseException:
        await store.finish_turn(turn_id, status="failed", error_code="setup_failed")
        raise
    return history


@contextlib.asynccontextmanager
async def finished_if_setup_fails(store: Store, turn_id: str) -> AsyncIterator[None]:
    """Around what runs between recording a turn as ``running`` and relaying its events
    (which finishes it whatever happens): a failure or a cancel there finishes the turn
    (``failed``/``setup_failed`` or ``cancelled``) instead of leaving it running until
    the next turn abandons it."""
    try:
        yield
    except asyncio.CancelledError:
        await asyncio.shield(store.finish_turn(turn_id, status="cancelled", error_code="cancelled"))
        raise
    except BaseException:
        await store.finish_turn(turn_id, status="failed", error_code="setup_failed")
        raise


AT_LAST_VERSION = " The workflow is at its last saved version."


async def relay_events(
    store: Store,
    events: Any,
    turn_id: str,
    session: SessionRecord,
    send: Send,
    usage: UsageLedger,
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
        await store.finish_turn(
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
                await store.add_message(session.id, "assistant", event.text, turn_id)
                stored_message = True
            elif isinstance(event, (ConfirmEvent, PlanProposedEvent, ProposalEvent)):
                await store.record_confirmation(
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
                    await store.add_message(session.id, "assistant", "", turn_id)
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
        return error_frame(exc.code, _sentence(exc.message) + AT_LAST_VERSION, turn_id)
    except Exception as exc:
        down = unavailable(exc)
        if down is not None:  # the database or Redis went away mid-turn
            log.warning("turn %s stopped: %s", turn_id, exc)
            with contextlib.suppress(Exception):  # the store may be what is down
                await finish("failed", error_code=down.code)
            return error_frame(down.code, _sentence(down.message) + AT_LAST_VERSION, turn_id)
        log.exception("turn %s failed", turn_id)
        await finish("failed", error_code="internal_error")
        return error_frame(
            "internal_error", "The turn failed unexpectedly." + AT_LAST_VERSION, turn_id
        )
    return last


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."
