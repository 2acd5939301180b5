"""The last answer: an exception no handler turned into a response.

Starlette answers such an exception with a bare ``500 Internal Server Error`` in
text/plain and re-raises it, so uvicorn logs it and, the response having started,
drops the keep-alive connection. :class:`ServerErrors` sits outside every other
middleware and answers it in the one error shape instead, 500
``{"error": {"code": "internal_error", "message"}}``, with nothing of the
exception in the body (its text may hold a request's data, a query's parameters),
logs it once with a reference, and sends that reference as ``X-Request-Id`` and in
the message, so a report can be matched to the log line. An outage the handlers did
not see (the database or Redis out of reach in a middleware) is 503
``service_unavailable`` as everywhere else.

WebSockets are left alone: the chat answers a frame whose work fails with an
``error`` frame itself (:func:`app.ws.chat.answered`).
"""

from __future__ import annotations

import logging
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import InternalError
from app.http_errors import error_response
from app.unavailable import unavailable
from tools.errors import PlanwrightError

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-Id"


class ServerErrors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked_send)
        except Exception as exc:
            if started:  # too late to answer: the server ends the response and says why
                raise
            reference = uuid.uuid4().hex
            down = unavailable(exc)
            error: PlanwrightError
            if down is not None:
                log.warning("%s %s (request %s): %s", *_line(scope), reference, exc)
                error = down
            else:
                log.error("%s %s failed (request %s)", *_line(scope), reference, exc_info=exc)
                error = InternalError(
                    "Something went wrong on the server; it has been logged as request "
                    f"{reference}. Try again, or quote that reference in a report."
                )
            response = error_response(error, headers={REQUEST_ID_HEADER: reference})
            await response(scope, receive, send)


def _line(scope: Scope) -> tuple[str, str]:
    return str(scope.get("method", "")), str(scope.get("path", ""))
