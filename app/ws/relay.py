"""Relaying a workflow's bus events to one socket, with catch-up from the database.

Shared by the live view (:mod:`app.ws.watch`) and the chat socket
(:mod:`app.ws.chat`). The bus may miss versions: a publish that has not gone out
yet (Redis down, see :mod:`app.publishing`), or events aged out of the capped
stream. Whenever the versions a socket would get skip one, it gets the
database's current document first, so nobody is left behind on a committed
version.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from app.bus.base import EventBus, Subscription
from app.bus.memory import SubscriberOverflowError, workflow_version
from app.store import Store
from app.ws.connection import Connection
from app.ws.protocol import WorkflowFrame
from tools.errors import PlanwrightError

log = logging.getLogger(__name__)

RESUBSCRIBE_FIRST_S = 0.25
RESUBSCRIBE_MAX_S = 5.0


async def snapshot(store: Store, workflow_id: str) -> dict[str, Any] | None:
    """The workflow's current document as a ``workflow`` frame (``None``: no such workflow)."""
    record = await store.get_workflow(workflow_id)
    if record is None:
        return None
    return WorkflowFrame(version=record.version, yaml=record.yaml, workflow_id=record.id).wire()


async def forward(store: Store, workflow_id: str, event: dict[str, Any], conn: Connection) -> None:
    """Send a bus event; when versions were skipped, the database's document first."""
    last = conn.last_workflow_version or 0
    version = workflow_version(event)
    if version is not None and version > last + 1:
        current = await snapshot(store, workflow_id)
        if current is not None and current["version"] > last:
            await conn.send(current)
    await conn.send(event)


async def catch_up(
    store: Store,
    workflow_id: str,
    since_version: int,
    current: dict[str, Any],
    subscription: Subscription,
    conn: Connection,
) -> None:
    """Send what was missed since ``since_version``: the bus's retained events when
    they run on from it without a gap, and ``current`` (read from the database after
    subscribing) whenever they do not reach it."""
    conn.last_workflow_version = since_version
    replay = subscription.take_replay()
    versions = [workflow_version(event) for event in replay]
    if versions != list(range(since_version + 1, since_version + 1 + len(replay))):
        await conn.send(current)
    for event in replay:
        await forward(store, workflow_id, event, conn)
    if (conn.last_workflow_version or 0) < current["version"]:
        await conn.send(current)


async def relay_to_chat(
    bus: EventBus,
    store: Store,
    workflow_id: str,
    subscription: Subscription | None,
    conn: Connection,
) -> None:
    """Relay changes made elsewhere to a chat socket until it closes.

    A client too slow to keep up is closed (4008). When the bus fails (or was down
    when the socket opened: ``subscription`` is ``None``) the socket stays open (the
    turn it may be running needs no bus); the relay subscribes again, with backoff,
    and catches up from where the socket is.
    """
    try:
        while not conn.closed:
            if subscription is None:
                subscription = await _resubscribe(bus, store, workflow_id, conn)
                if subscription is None:
                    return
            try:
                async for event in subscription:
                    await forward(store, workflow_id, event, conn)
                return
            except SubscriberOverflowError as exc:
                await conn.close_for(exc)
                return
            except PlanwrightError as exc:
                log.info(
                    "chat relay for %s lost the bus (%s); resubscribing", workflow_id, exc.code
                )
            await subscription.close()
            subscription = None
    finally:
        if subscription is not None:
            await subscription.close()  # the one it holds now (closing twice is harmless)


async def _resubscribe(
    bus: EventBus, store: Store, workflow_id: str, conn: Connection
) -> Subscription | None:
    """Subscribe again after ``RESUBSCRIBE_FIRST_S``, the wait doubling (up to
    ``RESUBSCRIBE_MAX_S``) while the bus refuses, until the socket closes (None)."""

    async def subscribe() -> tuple[int | None, Subscription]:
        since = conn.last_workflow_version
        return since, await bus.subscribe(workflow_id, since_version=since)

    if conn.closed:
        return None
    await asyncio.sleep(RESUBSCRIBE_FIRST_S)
    subscribed: tuple[int | None, Subscription] | None = await AsyncRetrying(
        wait=wait_exponential(multiplier=2 * RESUBSCRIBE_FIRST_S, max=RESUBSCRIBE_MAX_S),
        retry=retry_if_exception_type(Exception),
        stop=lambda _state: conn.closed,
        retry_error_callback=lambda _state: None,
    )(subscribe)
    if subscribed is None:
        return None
    since, subscription = subscribed
    try:
        current = await snapshot(store, workflow_id)
        if current is not None:
            if since is None:
                await conn.send(current)
            else:
                await catch_up(store, workflow_id, since, current, subscription, conn)
    except BaseException:
        await subscription.close()
        raise
    return subscription
