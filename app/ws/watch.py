"""WebSocket live view: ``/v1/workflows/{id}/watch?since_version=N``.

Sends the current document first (or, after a reconnect, what was missed:
retained events from the bus, or the database's current document when those
do not reach it), then every ``workflow`` event as it is committed. When the
bus fails the socket is closed with 1013 (try again later); the client
reconnects with ``since_version`` and catches up from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Annotated

from fastapi import APIRouter, Query, WebSocket

from app.api.schemas import MAX_VERSION
from app.deps import ServicesDep
from app.text import PathId
from app.ws.chat import authenticate
from app.ws.connection import NOT_FOUND, Connection
from app.ws.protocol import error_frame
from app.ws.relay import catch_up, forward, snapshot
from tools.errors import PlanwrightError

router = APIRouter()


@router.websocket("/v1/workflows/{workflow_id}/watch")
async def watch_socket(
    websocket: WebSocket,
    workflow_id: PathId,
    services: ServicesDep,
    token: str | None = None,
    since_version: Annotated[int | None, Query(ge=0, le=MAX_VERSION)] = None,
) -> None:
    """A ``since_version`` that is not a version number (``abc``, ``1.5``, ``1e30``,
    empty, negative) closes the socket with an ``error`` frame and 4400
    (:func:`app.ws.chat.refuse_invalid_socket`)."""
    await websocket.accept()
    if await authenticate(websocket, services, token) is None:
        return
    current = await snapshot(services.store, workflow_id)
    if current is None:
        await websocket.send_json(
            {**error_frame("not_found", "No such workflow.").wire(), "seq": 1}
        )
        await websocket.close(code=NOT_FOUND, reason="no such workflow")
        return
    async with Connection(websocket, queue_size=services.settings.send_queue_size) as conn:
        if since_version is not None and since_version > current["version"]:
            since_version = None  # the client is ahead of us (reset database?): start over
        subscription = await conn.subscribe(services.bus, workflow_id, since_version=since_version)
        if subscription is None:  # the bus is down: closed with 1013
            return
        receiver = asyncio.create_task(_drain_client(websocket))
        try:
            # Read after subscribing: anything committed later arrives live.
            current = await snapshot(services.store, workflow_id) or current
            if since_version is None:
                await conn.send(current)
            else:
                await catch_up(
                    services.store, workflow_id, since_version, current, subscription, conn
                )
            reader = subscription.__aiter__()
            while not conn.closed and not receiver.done():
                next_event = asyncio.ensure_future(reader.__anext__())
                done, _ = await asyncio.wait(
                    {next_event, receiver}, return_when=asyncio.FIRST_COMPLETED
                )
                if next_event not in done:
                    next_event.cancel()
                    break
                await forward(services.store, workflow_id, next_event.result(), conn)
        except PlanwrightError as exc:  # too slow (4008), or the bus failed (1013)
            await conn.close_for(exc)
        except StopAsyncIteration:
            pass
        finally:
            receiver.cancel()
            await subscription.close()


async def _drain_client(websocket: WebSocket) -> None:
    """A watcher sends nothing; reading detects the disconnect."""
    with contextlib.suppress(Exception):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
