"""One WebSocket connection: seq-numbered frames through a bounded send queue.

``send`` never blocks the caller (a turn, or a bus forwarder shared with
other watchers): frames go into a bounded queue drained by a writer task. A
client that cannot keep up is closed with code 4008 instead of stalling
anyone else. When the event bus fails (Redis down) sockets are closed with
1013, "try again later": the client reconnects and catches up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from fastapi import WebSocket
from starlette.websockets import WebSocketState

from app.bus.base import EncodedEvent, EventBus, Subscription
from app.bus.memory import SubscriberOverflowError
from app.ws.protocol import ServerFrame, wire

SLOW_CLIENT = 4008
NOT_ALLOWED = 1008
NOT_FOUND = 4404
INVALID_REQUEST = 4400
"""A query or path parameter the socket cannot take (after an ``error`` frame)."""
TRY_AGAIN_LATER = 1013
BUS_DOWN_REASON = "live updates are unavailable; try again later"


def _encode(frame: dict[str, Any], seq: int) -> str:
    """The frame's JSON text with its ``seq``. A bus event keeps the text it arrived
    as, so a version fanned out to many sockets is encoded once, not once per socket."""
    if isinstance(frame, EncodedEvent) and frame.text.endswith("}") and "seq" not in frame:
        return f'{frame.text[:-1]},"seq":{seq}}}' if len(frame) else f'{{"seq":{seq}}}'
    return json.dumps({**frame, "seq": seq}, separators=(",", ":"), ensure_ascii=False)


def close_code(error: BaseException) -> int:
    """The close code for a subscription that ended with ``error``: 4008 only for a
    client that fell behind; anything else is the server's trouble (1013)."""
    return SLOW_CLIENT if isinstance(error, SubscriberOverflowError) else TRY_AGAIN_LATER


class Connection:
    def __init__(self, websocket: WebSocket, *, queue_size: int) -> None:
        self.websocket = websocket
        self._queue: asyncio.Queue[str | None] = asyncio.Queue(queue_size)
        self._seq = 0
        self._writer: asyncio.Task[None] | None = None
        self.closed = False
        self.watched: str | None = None
        """The workflow this socket follows on the bus (set by :meth:`subscribe`)."""
        self._versions: dict[str | None, int] = {}
        # The newest version sent per workflow: a plan turn's frames are about several.
        # Replies to the client's own frames may fill only half the queue, so a
        # burst of client frames never leaves a running turn's frames without room.
        self._reply_limit = max(1, queue_size // 2)
        self._room = asyncio.Event()

    @property
    def last_workflow_version(self) -> int | None:
        """The newest version of the followed workflow this socket was sent."""
        return self._versions.get(self.watched)

    @last_workflow_version.setter
    def last_workflow_version(self, version: int | None) -> None:
        if version is None:
            self._versions.pop(self.watched, None)
        else:
            self._versions[self.watched] = version

    async def __aenter__(self) -> Connection:
        self._writer = asyncio.create_task(self._drain())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if not self.closed:
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)
        if self._writer is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._writer, timeout=5)
        # The socket is gone: a turn that outlives it sends into nothing, rather than
        # filling the queue with frames nobody reads (and then closing it as too slow).
        self.closed = True
        self._room.set()
        while not self._queue.empty():
            self._queue.get_nowait()

    async def send(self, frame: ServerFrame | dict[str, Any]) -> None:
        """Queue one frame (a model, or a bus event's JSON object) with the next ``seq``."""
        if self.closed:
            return
        frame = wire(frame)
        if frame.get("type") == "workflow":
            version, about = frame["version"], frame.get("workflow_id") or self.watched
            last = self._versions.get(about)
            if last is not None and version <= last:
                return  # already sent (a turn's own frame and its bus echo)
            self._versions[about] = version
        self._seq += 1
        try:
            self._queue.put_nowait(_encode(frame, self._seq))
        except asyncio.QueueFull:
            await self.close(SLOW_CLIENT, "client too slow: frames were not being read")

    async def reply(self, frame: ServerFrame | dict[str, Any]) -> None:
        """Queue the answer to one of the client's frames, waiting for the writer
        when replies are backed up: a client that sends faster than it reads is
        slowed down (its frames are read later), never closed as too slow."""
        while not self.closed and self._queue.qsize() >= self._reply_limit:
            self._room.clear()
            await self._room.wait()
        await self.send(frame)

    async def subscribe(
        self, bus: EventBus, workflow_id: str, *, since_version: int | None = None
    ) -> Subscription | None:
        """The bus subscription, or ``None`` after closing the socket with 1013 (a
        proper close frame) when the bus cannot be reached."""
        self.watched = workflow_id
        try:
            return await bus.subscribe(workflow_id, since_version=since_version)
        except Exception:
            await self.close(TRY_AGAIN_LATER, BUS_DOWN_REASON)
            return None

    async def close_for(self, error: BaseException) -> None:
        """Close because the bus subscription ended with ``error``."""
        code = close_code(error)
        await self.close(code, str(error) if code == SLOW_CLIENT else BUS_DOWN_REASON)

    async def close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self._room.set()
        if self._writer is not None:
            self._writer.cancel()
        with contextlib.suppress(Exception):
            if self.websocket.application_state != WebSocketState.DISCONNECTED:
                await self.websocket.close(code=code, reason=reason)

    async def _drain(self) -> None:
        while True:
            frame = await self._queue.get()
            self._room.set()
            if frame is None:
                return
            try:
                await self.websocket.send_text(frame)
            except Exception:
                self.closed = True
                self._room.set()
                return
