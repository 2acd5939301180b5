"""Mapping the package's typed errors to HTTP statuses (only at the edge)."""

from __future__ import annotations

from app.errors import AuthError, ConflictError, ForbiddenError, NotFoundError
from tools.errors import DocumentError, PlanwrightError, ToolInputError

_STATUS: tuple[tuple[type[PlanwrightError], int], ...] = (
    (AuthError, 401),
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (DocumentError, 422),
    (ToolInputError, 422),
)


def http_status(error: PlanwrightError) -> int:
    if error.code == "document_too_large":
        return 413
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 400
