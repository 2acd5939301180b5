"""The one writer: commit a version of a workflow, then publish it on the bus.

Turns (through :class:`app.turns.StoreCommitter`), ``PUT`` and revert all go
through :func:`commit_and_publish`, so a persisted version is always announced
as exactly one ``workflow`` event, and nothing is announced that is not persisted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agents.events import workflow_event
from app.bus.base import EventBus
from app.store import Store
from tools.document.structure import Change


async def commit_and_publish(
    store: Store,
    bus: EventBus,
    workflow_id: str,
    *,
    yaml: str,
    name: str | None,
    expected_version: int,
    author: str | None,
    tool: str,
    summary: str,
    changes: Sequence[Change],
    session_id: str | None = None,
    turn_id: str | None = None,
) -> int:
    """Commit ``yaml`` as version ``expected_version + 1`` and publish its ``workflow``
    event; returns the new version.

    Shielded: a cancelled caller (a turn, a dropped request) never leaves a persisted
    version unpublished. Raises what :meth:`Store.commit_version` raises (e.g.
    :class:`app.errors.VersionConflictError`), in which case nothing is published.
    """

    async def commit_then_publish() -> int:
        version = await store.commit_version(
            workflow_id,
            yaml=yaml,
            name=name,
            expected_version=expected_version,
            author=author,
            session_id=session_id,
            turn_id=turn_id,
            tool=tool,
            summary=summary,
        )
        await bus.publish(
            workflow_id,
            workflow_event(yaml, version, changes, workflow_id=workflow_id, turn_id=turn_id).wire(),
        )
        return version

    return await asyncio.shield(commit_then_publish())
