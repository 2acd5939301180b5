"""Refuse cross-site WebSocket handshakes in single-user mode.

Browsers let any page open a WebSocket to 127.0.0.1 and send its own origin
along. Without tokens nothing else stands between such a page and the user's
workflows, so a browser handshake from a foreign origin is closed (1008)
before the app sees it. Non-browser clients send no Origin and are let in.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send


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
        for name, value in scope.get("headers", []):
            if name == b"origin":
                host = urlsplit(value.decode("latin-1")).hostname or ""
                return host.lower() in self.allowed
        return True
