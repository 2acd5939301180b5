"""Waiting in line for a workflow's turn lock, shared by the in-process and Redis locks.

A turn on a busy workflow joins a bounded first-in-first-out line (``max_queue``
waiters per workflow; one more is refused). Each waiter holds a ticket and polls:
the poll renews the ticket's heartbeat, drops the tickets of waiters whose
heartbeat lapsed (their worker died), says where the ticket stands and, at the
head of the line with the lock free (or held by a dead worker), takes the lock in
the same atomic step. A waiter that stops (cancelled, failed) leaves the line.

The lock implementations give three primitives, each atomic (:class:`QueueingLock`);
:func:`wait_in_line` is the loop over them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Protocol

from app.bus.base import LockHandle

log = logging.getLogger(__name__)

FULL = -1
"""A join refused: the line is as long as it may be."""
LOST = 0
"""A poll that did not find the ticket: its heartbeat lapsed and it was dropped."""
POLL_S = 0.1
"""How often a waiter asks where it stands (and renews its heartbeat)."""
LEAVE_TIMEOUT_S = 1.0


class QueueingLock(Protocol):
    """A turn lock with a line. ``position`` is 1 for the next in line; a returned
    handle means the lock was taken (and the ticket left the line)."""

    async def join(
        self, workflow_id: str, ticket: str, *, ttl_s: float, max_queue: int
    ) -> tuple[LockHandle | None, int]:
        """Take the lock at once when nobody holds it and nobody waits; else join the
        line: ``(None, position)``, or ``(None, FULL)``."""
        ...

    async def poll(
        self, workflow_id: str, ticket: str, *, ttl_s: float
    ) -> tuple[LockHandle | None, int]:
        """Renew the ticket and take the lock when it is first and the lock is free:
        ``(handle, 0)``; else ``(None, position)``, or ``(None, LOST)``."""
        ...

    async def leave(self, workflow_id: str, ticket: str) -> None: ...


async def wait_in_line(
    lock: QueueingLock,
    workflow_id: str,
    *,
    ttl_s: float,
    max_queue: int,
    on_position: Callable[[int], Awaitable[None]],
    poll_s: float = POLL_S,
) -> LockHandle | None:
    """The lock, taken in line order; ``None`` when the line is full. ``on_position``
    hears each new position while waiting. Cancelling the wait leaves the line."""
    ticket = secrets.token_hex(12)
    handle, position = await lock.join(workflow_id, ticket, ttl_s=ttl_s, max_queue=max_queue)
    if handle is not None or position == FULL:
        return handle
    try:
        shown: int | None = None
        while True:
            if position != shown:
                await on_position(position)
                shown = position
            await asyncio.sleep(poll_s)
            handle, position = await lock.poll(workflow_id, ticket, ttl_s=ttl_s)
            if handle is not None:
                return handle
            if position == LOST:  # this worker stalled past its heartbeat: back in line
                log.warning("a turn on %s lost its place in line; joining again", workflow_id)
                handle, position = await lock.join(
                    workflow_id, ticket, ttl_s=ttl_s, max_queue=max_queue
                )
                if handle is not None or position == FULL:
                    return handle
    except BaseException:
        # Cancelled or failed: give the place up now rather than when its heartbeat
        # lapses. Bounded, and never masking why the wait ended.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(lock.leave(workflow_id, ticket)), LEAVE_TIMEOUT_S)
        raise
