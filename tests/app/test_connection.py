"""A socket's Connection once the socket is gone: nothing more is queued."""

from __future__ import annotations

from starlette.websockets import WebSocketState

from app.ws.connection import Connection


class _Socket:
    application_state = WebSocketState.CONNECTED

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closes: list[int] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(text)

    async def close(self, code: int, reason: str) -> None:
        self.closes.append(code)


async def test_a_turn_that_outlives_its_socket_queues_nothing_and_closes_nothing() -> None:
    socket = _Socket()
    conn = Connection(socket, queue_size=4)  # type: ignore[arg-type]
    async with conn:
        await conn.send({"type": "message", "text": "hi"})
    assert conn.closed
    for version in range(1, 10):  # more than the queue holds
        await conn.send({"type": "workflow", "version": version, "yaml": "x" * 100_000})
    assert conn._queue.empty()
    assert socket.closes == [], "not closed as too slow: it is gone"
    assert len(socket.sent) == 1
