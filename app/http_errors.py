"""Mapping the package's typed errors to HTTP statuses (only at the edge)."""

from __future__ import annotations

from starlette.responses import JSONResponse

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
    if error.code in ("openfn_runtime_unavailable", "service_unavailable"):
        return 503  # the server's lack, not the request's
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 400


def error_response(error: PlanwrightError) -> JSONResponse:
    """The response for an error: ``{"error": {"code", "message"}}``. Built here for the
    app's handler and for :class:`app.early_auth.EarlyAuth`, so a 401 is the same
    whichever of them refuses the request."""
    status = http_status(error)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    body: dict[str, str | list[str]] = {"code": error.code, "message": error.message}
    field = error.details.get("field")
    if isinstance(field, str):  # the part of the input an import or export error is about
        body["field"] = field
    changes = error.details.get("changes")
    if isinstance(changes, list):  # the proposal's changes a review answer was refused for
        body["changes"] = [str(c) for c in changes]
    return JSONResponse({"error": body}, status_code=status, headers=headers)
