"""Application-level errors (store, API, auth), mapped to HTTP statuses and ``error`` frames.

Each carries a stable ``code`` (see :class:`tools.errors.PlanwrightError`); extra
keyword arguments become ``details`` and show up in ``as_dict()``.
"""

from __future__ import annotations

from tools.errors import PlanwrightError

__all__ = [
    "AuthError",
    "ConflictError",
    "ForbiddenError",
    "NotFoundError",
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
