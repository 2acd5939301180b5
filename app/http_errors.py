"""Mapping errors to HTTP responses (only at the edge): every error answer is
``{"error": {"code", "message"}}``, the framework's own included.

The app's typed errors (:class:`tools.errors.PlanwrightError`) map to a status here;
what Starlette or FastAPI refuse before a handler runs (an unparsable body, an unknown
path, a wrong method, a failed request validation) is first turned into one of them by
:func:`framework_error`, so there is one way an error becomes a response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

from app.errors import (
    AuthError,
    ConflictError,
    ForbiddenError,
    InternalError,
    NotFoundError,
    RequestError,
)
from tools.errors import DocumentError, PlanwrightError, ToolInputError

_STATUS: tuple[tuple[type[PlanwrightError], int], ...] = (
    (AuthError, 401),
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (DocumentError, 422),
    (ToolInputError, 422),
    (InternalError, 500),
)

_TOO_LARGE_CODES = frozenset({"document_too_large", "too_many_jobs", "too_many_edges"})

INVALID_JSON = "The request body is not valid JSON: it must be UTF-8 text of reasonable depth."

# The framework's refusals by status: a stable code and a message for each.
_FRAMEWORK: dict[int, tuple[str, str]] = {
    400: ("invalid_json", INVALID_JSON),
    404: ("not_found", "There is nothing at this path."),
    405: ("method_not_allowed", "This path does not take this method."),
    406: ("not_acceptable", "No representation of this resource is acceptable."),
    413: ("body_too_large", "The request body is too large."),
    415: ("unsupported_media_type", "This media type is not accepted here."),
    416: ("range_not_satisfiable", "The requested range cannot be served."),
}


def http_status(error: PlanwrightError) -> int:
    if isinstance(error, RequestError):
        return error.status
    if error.code in _TOO_LARGE_CODES:
        return 413
    if error.code in ("openfn_runtime_unavailable", "service_unavailable"):
        return 503  # the server's lack, not the request's
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 400


def error_response(
    error: PlanwrightError, *, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The response for an error: ``{"error": {"code", "message"}}``. Built here for the
    app's handlers, :class:`app.early_auth.EarlyAuth` and :mod:`app.limits`, so an error
    looks the same whichever of them refuses the request."""
    status = http_status(error)
    out = dict(error.headers) if isinstance(error, RequestError) else {}
    if status == 401:
        out["WWW-Authenticate"] = "Bearer"
    out.update(headers or {})
    body: dict[str, str | list[str]] = {"code": error.code, "message": error.message}
    field = error.details.get("field")
    if isinstance(field, str):  # the part of the input an import or export error is about
        body["field"] = field
    changes = error.details.get("changes")
    if isinstance(changes, list):  # the proposal's changes a review answer was refused for
        body["changes"] = [str(c) for c in changes]
    return JSONResponse({"error": body}, status_code=status, headers=out or None)


def framework_error(exc: HTTPException) -> PlanwrightError:
    """A Starlette/FastAPI ``HTTPException`` (raised by routing, body parsing, static
    files) as the typed error it stands for. The app itself raises none: a 400 is
    FastAPI failing to parse the body (bad JSON, invalid UTF-8, nesting past Python's
    recursion limit)."""
    if exc.status_code == 404:
        return NotFoundError(_FRAMEWORK[404][1])
    code, message = _FRAMEWORK.get(exc.status_code, ("http_error", str(exc.detail)))
    return RequestError(message, code=code, status=exc.status_code, headers=exc.headers)


def validation_error(errors: Sequence[Any]) -> PlanwrightError:
    """FastAPI's request validation failures as one error: a body that is not JSON at
    all is ``invalid_json`` (400, as when it cannot even be decoded); anything else is
    ``invalid_request`` (422), naming up to ten of the problems."""
    if any(isinstance(e, Mapping) and e.get("type") == "json_invalid" for e in errors):
        return RequestError(INVALID_JSON, code="invalid_json", status=400)
    problems = [
        f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in errors[:10]
    ]
    return RequestError("; ".join(problems), code="invalid_request", status=422)
