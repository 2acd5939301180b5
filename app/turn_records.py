"""Recording the start of a turn: what workflow turns (:mod:`app.turns`) and plan
turns (:mod:`app.plan_turns`) store the same way, under their own locks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from agents.runner import TurnRunner
from app.store import SessionRecord, Store

log = logging.getLogger(__name__)


async def record_start(
    store: Store,
    runner: TurnRunner,
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
    project (``project_id``) with it. ``runner`` may be either graph's: both keep
    their checkpoints in one saver. If the message cannot be stored, the turn is
    marked failed (``setup_failed``) rather than left running.
    """
    history = [
        {"role": m.role, "content": m.content} for m in await store.list_messages(session.id)
    ]
    for dead in abandoned:
        try:
            await runner.forget(dead)
        except Exception:
            log.exception("could not delete the checkpoints of abandoned turn %s", dead)
    paused = await store.paused_turn(session.id)
    if paused is not None:
        await store.finish_turn(paused.id, status="cancelled", error_code="superseded")
        if paused.workflow_id is None:  # a plan review
            await store.withdraw_proposal(project_id, paused.id)
        await runner.forget(paused.id)
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
