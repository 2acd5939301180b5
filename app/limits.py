"""Request bodies over the size limit are refused before they are read.

A pure ASGI middleware, outside all but :class:`app.server_errors.ServerErrors`
(which reads nothing), so it runs before routing, authentication or body parsing:
a declared ``Content-Length`` over the limit gets 413 at once, without a byte of
the body read; a body without one (chunked) is counted as it
streams in, and the request fails with 413 the moment the count passes the
limit, so at most one chunk over the limit is ever held. (WebSocket frames are
limited by the server itself: ``ws_max_size``, see :func:`server_options`.)
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import RequestError
from app.http_errors import error_response
from app.settings import Settings


class BodyTooLargeError(HTTPException):
    """Raised from ``receive`` when a streamed body passes the limit (HTTP 413).

    An ``HTTPException`` so FastAPI's body parsing lets it through instead of
    turning it into a 400; the app maps it to the usual error shape."""

    def __init__(self, limit: int) -> None:
        super().__init__(status_code=413, detail=f"Request bodies are limited to {limit} bytes.")
        self.limit = limit


def too_large_response(limit: int) -> JSONResponse:
    message = f"Request bodies are limited to {limit} bytes."
    # Close the connection: the rest of the body is never read.
    error = RequestError(message, code="body_too_large", status=413)
    return error_response(error, headers={"connection": "close"})


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_bytes:
            await too_large_response(self.max_bytes)(scope, receive, send)
            return
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLargeError(self.max_bytes)
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except BodyTooLargeError:
            if started:
                raise
            await too_large_response(self.max_bytes)(scope, receive, send)


def server_options(settings: Settings) -> dict[str, Any]:
    """Options for uvicorn. A client frame over ``max_frame_bytes`` is refused by the
    WebSocket implementation itself (close 1009, "message too big") before it is
    buffered whole. Per-message compression is off unless ``ws_compression``: the
    server would deflate each ``workflow`` frame (the whole YAML) once per socket,
    which is most of the fan-out time on a large document (p99 ~370 ms vs ~57 ms for
    100 watchers of a 200-job workflow, bench/ws_fanout.py --jobs 200)."""
    return {
        "ws_max_size": settings.max_frame_bytes,
        "ws_per_message_deflate": settings.ws_compression,
    }
