"""Application-level errors (store, API, auth), mapped to HTTP statuses and ``error`` frames.

Each carries a stable ``code`` (see :class:`tools.errors.PlanwrightError`); extra
keyword arguments become ``details`` and show up in ``as_dict()``.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.errors import PlanwrightError

__all__ = [
    "AuthError",
    "ConflictError",
    "ForbiddenError",
    "InternalError",
    "NotFoundError",
    "RequestError",
    "VersionConflictError",
]


class NotFoundError(PlanwrightError):
    """A workflow, version, session or turn that does not exist (HTTP 404)."""

    code = "not_found"


class ConflictError(PlanwrightError):
    """The request clashes with the current state (HTTP 409)."""

    code = "conflict"


class VersionConflictError(ConflictError):
    """An optimistic update was based on a stale version.

    ``details`` carry ``current_version`` and ``expected_version``.
    """

    code = "version_conflict"


class ForbiddenError(PlanwrightError):
    """Authenticated, but not allowed to do this (HTTP 403)."""

    code = "forbidden"


class AuthError(PlanwrightError):
    """Missing or wrong credentials (HTTP 401, WebSocket close 1008)."""

    code = "unauthorized"


class InternalError(PlanwrightError):
    """Something failed that no handler expected (HTTP 500); says nothing of what."""

    code = "internal_error"


class RequestError(PlanwrightError):
    """A request refused before any handler ran: an unparsable body, an unknown path, a
    method the path does not take, a body over the size limit. Its HTTP ``status``
    travels with it (the framework decided it); ``headers`` (e.g. ``Allow`` on a 405)
    go out with the response."""

    code = "bad_request"

    def __init__(
        self, message: str, *, code: str, status: int, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.headers = dict(headers or {})
