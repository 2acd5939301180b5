"""The package's exception hierarchy.

Code raises types; the edges (tool results for the model, HTTP statuses,
WebSocket ``error`` frames) map them to data. Every error carries a stable
``code`` that clients and tests can rely on.
"""

from __future__ import annotations

from typing import Any


class PlanwrightError(Exception):
    """Base of every error Planwright raises on purpose."""

    code: str = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class DocumentError(PlanwrightError):
    """The workflow YAML cannot be accepted (syntax, shape, size, hostile constructs)."""

    code = "invalid_document"


class ToolInputError(PlanwrightError):
    """A tool call names something that does not exist or breaks a rule."""

    code = "invalid_input"


class ReadOnlyError(PlanwrightError):
    """A mutation was attempted in a read-only context."""

    code = "read_only"


class UnknownToolError(PlanwrightError):
    code = "unknown_tool"


class CodeEditError(PlanwrightError):
    """An ``edit_job_code`` edit could not be applied to the current body."""

    code = "code_edit_failed"
