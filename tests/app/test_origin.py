"""The single-user Origin check: host, scheme and port must all be ours."""

from __future__ import annotations

from typing import Any

import pytest

from app.origin import SameOriginWebSockets

HOSTS = ["127.0.0.1", "localhost", "[::1]"]


async def _handshake(origin: str | None, host: str = "127.0.0.1:8000", scheme: str = "ws") -> str:
    reached: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append("app")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    scope = {"type": "websocket", "scheme": scheme, "headers": headers, "path": "/"}
    await SameOriginWebSockets(app, HOSTS)(scope, receive, send)
    if reached:
        return "accepted"
    assert sent == [{"type": "websocket.close", "code": 1008, "reason": "cross-site origin"}]
    return "refused"


@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        (None, "127.0.0.1:8000", "ws"),  # not a browser
        ("http://127.0.0.1:8000", "127.0.0.1:8000", "ws"),
        ("http://localhost:8000", "localhost:8000", "ws"),
        ("http://[::1]:8000", "[::1]:8000", "ws"),
        ("https://127.0.0.1", "127.0.0.1", "wss"),  # default ports
        ("http://localhost", "localhost:80", "ws"),
    ],
)
async def test_our_own_origin_is_accepted(origin: str | None, host: str, scheme: str) -> None:
    assert await _handshake(origin, host, scheme) == "accepted"


@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        ("https://evil.example.com", "127.0.0.1:8000", "ws"),
        ("http://127.0.0.1:5173", "127.0.0.1:8000", "ws"),  # another local server
        ("http://localhost:8001", "localhost:8000", "ws"),
        ("https://127.0.0.1:8000", "127.0.0.1:8000", "ws"),  # scheme differs
        ("http://127.0.0.1:443", "127.0.0.1", "wss"),
        ("file://", "127.0.0.1:8000", "ws"),
        ("null", "127.0.0.1:8000", "ws"),
        ("http://127.0.0.1:notaport", "127.0.0.1:8000", "ws"),
    ],
)
async def test_a_foreign_origin_is_refused(origin: str, host: str, scheme: str) -> None:
    assert await _handshake(origin, host, scheme) == "refused"
