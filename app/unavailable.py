"""The database or Redis did not answer in time: one error, ``service_unavailable``.

Every wait on Postgres and Redis is bounded (``PLANWRIGHT_DB_*`` and
``PLANWRIGHT_REDIS_TIMEOUT_S``); when one runs out, or the server cut the connection,
the driver raises its own exception. :func:`unavailable` recognises those (and
nothing else: a constraint violation is a bug, not an outage) so the edges answer
with a stable code: HTTP 503 ``{"error": {"code": "service_unavailable", ...}}`` and
the chat's ``error`` frame. The pools reconnect by themselves once the server is back
(``pool_pre_ping`` for the store, ``check`` for the checkpointer's pool, a fresh
connection for Redis), so the next request works without a restart.
"""

from __future__ import annotations

import logging

import psycopg
import redis.exceptions
import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.http_errors import error_response
from tools.errors import PlanwrightError

log = logging.getLogger(__name__)

# SQLSTATEs of an outage rather than a bad statement: connection exceptions (class
# 08), too many connections (53300), a statement cancelled by statement_timeout, the
# server shutting down or terminating the connection.
_OUTAGE_STATES = ("08", "53300", "57014", "57P01", "57P02", "57P03")
_CONNECTION_KINDS: tuple[type[Exception], ...] = (
    sqlalchemy.exc.TimeoutError,  # no pooled connection free in time
    psycopg.OperationalError,  # the checkpointer's connections (PoolTimeout included)
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    ConnectionError,
    TimeoutError,
)


class ServiceUnavailableError(PlanwrightError):
    """The database or Redis is unreachable or too slow right now (HTTP 503)."""

    code = "service_unavailable"


def unavailable(exc: BaseException) -> ServiceUnavailableError | None:
    """``exc`` (or what caused it) as an outage, or ``None`` when it is something else."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _is_outage(current):
            return ServiceUnavailableError(
                "The database or the event bus did not answer in time; nothing was lost "
                "that had been committed. Try again shortly."
            )
        current = current.__cause__ or current.__context__
    return None


def _is_outage(exc: BaseException) -> bool:
    if isinstance(exc, (ServiceUnavailableError, *_CONNECTION_KINDS)):
        return True
    if isinstance(exc, sqlalchemy.exc.DBAPIError):
        if exc.connection_invalidated or exc.statement is None:  # None: while connecting
            return True
        if isinstance(exc, sqlalchemy.exc.OperationalError | sqlalchemy.exc.InterfaceError):
            return True
        state = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
        return isinstance(state, str) and state.startswith(_OUTAGE_STATES)
    state = getattr(exc, "sqlstate", None)  # asyncpg's own, before SQLAlchemy wraps it
    if isinstance(state, str) and state.startswith(_OUTAGE_STATES):
        return True
    return type(exc).__module__.startswith("asyncpg") and "connection" in type(exc).__name__.lower()


def install(app: FastAPI) -> None:
    """Answer an outage with 503 ``service_unavailable`` in the one error shape."""

    async def answer(request: Request, exc: Exception) -> JSONResponse:
        down = unavailable(exc)
        if down is None:
            raise exc
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        return error_response(down)

    kinds: list[type[Exception]] = [sqlalchemy.exc.DBAPIError, *_CONNECTION_KINDS]
    for kind in [*kinds, ServiceUnavailableError]:
        app.add_exception_handler(kind, answer)
