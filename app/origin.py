"""Refuse cross-site WebSocket handshakes in single-user mode.

Browsers let any page open a WebSocket to 127.0.0.1 and send its own origin
along. Without tokens nothing else stands between such a page and the user's
workflows, so a browser handshake from a foreign origin is closed (1008)
before the app sees it. An origin is ours only when all of it matches: an
allowed host name, the scheme that goes with the socket's (``http`` for
``ws``, ``https`` for ``wss``) and the port the client connected to (another
server on the same machine, e.g. a dev server on :5173, is another origin).
Non-browser clients send no Origin and are let in.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

_HTTP_SCHEME = {"ws": "http", "wss": "https"}
_DEFAULT_PORT = {"http": 80, "https": 443}


def _port(netloc: str, scheme: str) -> int | None:
    try:
        return urlsplit(f"//{netloc}").port or _DEFAULT_PORT.get(scheme)
    except ValueError:  # a port that is not a number
        return None


class SameOriginWebSockets:
    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str]) -> None:
        self.app = app
        self.allowed = {h.strip("[]").lower() for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not self._allowed(scope):
            await send({"type": "websocket.close", "code": 1008, "reason": "cross-site origin"})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        headers = dict(scope.get("headers", []))
        origin = headers.get(b"origin")
        if origin is None:
            return True
        scheme = _HTTP_SCHEME.get(scope.get("scheme", "ws"), "http")
        try:
            parts = urlsplit(origin.decode("latin-1"))
            origin_port = parts.port or _DEFAULT_PORT.get(parts.scheme)
        except ValueError:
            return False
        host = headers.get(b"host", b"").decode("latin-1")
        return (
            parts.scheme == scheme
            and (parts.hostname or "").lower() in self.allowed
            and origin_port is not None
            and origin_port == _port(host, scheme)
        )
