"""Recording the start of a turn: what workflow turns (:mod:`app.turns`) and plan
turns (:mod:`app.plan_turns`) store the same way, under their own locks."""

from __future__ import annotations

from collections.abc import Sequence

from agents.runner import TurnRunner
from app.store import SessionRecord, Store


async def record_start(
    store: Store,
    runner: TurnRunner,
    session: SessionRecord,
    content: str,
    *,
    turn_id: str,
    workflow_id: str | None,
    prompt_versions: dict[str, str],
    abandoned: Sequence[str],
) -> list[dict[str, str]]:
    """Record turn ``turn_id`` and the user's message; returns the session's history
    before it.

    The caller holds the turn's lock and has just marked the turns a dead worker
    left ``running`` as abandoned (``abandoned``, their ids): their checkpoints go
    now, since nothing can resume them. A question the session left unanswered is
    superseded by the new message. ``runner`` may be either graph's: both keep
    their checkpoints in one saver. If the message cannot be stored, the turn is
    marked failed (``setup_failed``) rather than left running.
    """
    history = [
        {"role": m.role, "content": m.content} for m in await store.list_messages(session.id)
    ]
    for dead in abandoned:
        await runner.forget(dead)
    paused = await store.paused_turn(session.id)
    if paused is not None:
        await store.finish_turn(paused.id, status="cancelled", error_code="superseded")
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
