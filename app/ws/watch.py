"""WebSocket live view: ``/v1/workflows/{id}/watch?since_version=N``.

Sends the current document first (or, after a reconnect, what was missed:
retained events from the bus, or a fresh snapshot when those do not reach
back far enough), then every ``workflow`` event as it is committed.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fastapi import APIRouter, WebSocket

from app.deps import ServicesDep
from app.services import Services
from app.ws.chat import authenticate
from app.ws.connection import NOT_FOUND, SLOW_CLIENT, Connection
from app.ws.protocol import WorkflowFrame, error_frame
from tools.errors import PlanwrightError

router = APIRouter()
CATCH_UP_WAIT_S = 1.0


async def _snapshot(services: Services, workflow_id: str) -> dict[str, Any] | None:
    record = await services.store.get_workflow(workflow_id)
    if record is None:
        return None
    return WorkflowFrame(version=record.version, yaml=record.yaml, workflow_id=record.id).wire()


@router.websocket("/v1/workflows/{workflow_id}/watch")
async def watch_socket(
    websocket: WebSocket,
    workflow_id: str,
    services: ServicesDep,
    token: str | None = None,
    since_version: int | None = None,
) -> None:
    await websocket.accept()
    if await authenticate(websocket, services, token) is None:
        return
    current = await _snapshot(services, workflow_id)
    if current is None:
        await websocket.send_json(
            {**error_frame("not_found", "No such workflow.").wire(), "seq": 1}
        )
        await websocket.close(code=NOT_FOUND, reason="no such workflow")
        return
    async with Connection(websocket, queue_size=services.settings.send_queue_size) as conn:
        if since_version is not None and since_version > current["version"]:
            since_version = None  # the client is ahead of us (reset database?): start over
        subscription = await services.bus.subscribe(workflow_id, since_version=since_version)
        current = await _snapshot(services, workflow_id) or current
        behind = since_version is None or current["version"] > since_version
        if since_version is None:
            await conn.send(current)
        conn.last_workflow_version = current["version"] if since_version is None else since_version
        reader = subscription.__aiter__()
        receiver = asyncio.create_task(_drain_client(websocket))
        try:
            if behind and since_version is not None:
                await _catch_up(services, workflow_id, reader, conn)
            while not conn.closed and not receiver.done():
                next_event = asyncio.ensure_future(reader.__anext__())
                done, _ = await asyncio.wait(
                    {next_event, receiver}, return_when=asyncio.FIRST_COMPLETED
                )
                if next_event not in done:
                    next_event.cancel()
                    break
                await _forward(services, workflow_id, next_event.result(), conn)
        except PlanwrightError as exc:
            await conn.close(SLOW_CLIENT, exc.message)
        except StopAsyncIteration:
            pass
        finally:
            receiver.cancel()
            await subscription.close()


async def _catch_up(services: Services, workflow_id: str, reader: Any, conn: Connection) -> None:
    """Replay what was missed; if the bus no longer holds the next version, snapshot."""
    try:
        first = await asyncio.wait_for(reader.__anext__(), timeout=CATCH_UP_WAIT_S)
    except TimeoutError:
        first = None
    await _forward(services, workflow_id, first, conn)


async def _forward(
    services: Services, workflow_id: str, event: dict[str, Any] | None, conn: Connection
) -> None:
    last = conn.last_workflow_version or 0
    if event is None or (event.get("type") == "workflow" and event["version"] > last + 1):
        snapshot = await _snapshot(services, workflow_id)
        if snapshot is not None and snapshot["version"] > last:
            await conn.send(snapshot)
    if event is not None:
        await conn.send(event)


async def _drain_client(websocket: WebSocket) -> None:
    """A watcher sends nothing; reading detects the disconnect."""
    with contextlib.suppress(Exception):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
