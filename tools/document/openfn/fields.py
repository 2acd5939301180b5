"""Reading imported data field by field: every error names the field it is about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from tools.errors import DocumentError

CONTEXT_FIELD = "openfn"
"""The document field that keeps what an imported OpenFn file held around the workflow."""


def bad(field: str, message: str, *, code: str = "invalid_import") -> NoReturn:
    """Raise the import error for ``field`` (a dotted path such as ``workflows.a.jobs.b``)."""
    raise DocumentError(f"{field}: {message}", code=code, field=field)


def mapping(value: Any, field: str, *, optional: bool = False) -> Mapping[str, Any]:
    """``value`` as a mapping with string keys; ``None`` is empty when ``optional``."""
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        bad(field, f"must be a mapping, not {_kind(value)}.")
    for key in value:
        if not isinstance(key, str):
            bad(field, f"keys must be strings, got {key!r}.")
    return value


def text(node: Mapping[str, Any], name: str, field: str, *, required: bool = False) -> str | None:
    """Field ``name`` of ``node`` as a string (``None`` when absent and not required)."""
    value = node.get(name)
    if value is None:
        if required:
            bad(f"{field}.{name}", "is required.")
        return None
    if not isinstance(value, str):
        bad(f"{field}.{name}", f"must be a string, not {_kind(value)}.")
    return value


def flag(node: Mapping[str, Any], name: str, field: str, *, default: bool) -> bool:
    value = node.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        bad(f"{field}.{name}", f"must be true or false, not {_kind(value)}.")
    return value


TRIGGER_SETTINGS = ("cron_expression", "webhook_reply", "webhook_response_config", "custom_path")
"""A trigger's settings, the same fields in a project.yaml trigger and a workflow.json step."""


def trigger_settings(node: Mapping[str, Any], field: str) -> tuple[dict[str, Any], str | None]:
    """A trigger's :data:`TRIGGER_SETTINGS` as given (``cron_expression`` and ``custom_path``
    must be strings) and its cron cursor job (``cron_cursor_job``, else ``cron_cursor_job_id``)."""
    for name in ("cron_expression", "custom_path"):
        text(node, name, field)
    cursor = text(node, "cron_cursor_job", field) or text(node, "cron_cursor_job_id", field)
    return {name: node.get(name) for name in TRIGGER_SETTINGS}, cursor


def extras(node: Mapping[str, Any], known: set[str]) -> dict[str, Any]:
    """Fields Planwright does not read, kept as they came (unset ones dropped)."""
    return {k: v for k, v in node.items() if k not in known and v is not None}


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__
